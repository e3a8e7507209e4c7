"""The ``recall.status`` operation: what doctor shows of semantic recall (docs/recall.md)."""

from __future__ import annotations

from typing import Any

from daemon.recall.service import Embeddings
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs

OPS = Ops(Embeddings)


@OPS.op("recall.status", NoArgs)
async def recall_status(embeddings: Embeddings, request: NoArgs, call: Call) -> dict[str, Any]:
    return await embeddings.status()


@OPS.op("recall.rebuild", NoArgs)
async def recall_rebuild(embeddings: Embeddings, request: NoArgs, call: Call) -> dict[str, Any]:
    """Drop the vectors and embed the log again, in the background; how many events are to read."""
    return {"events": await embeddings.rebuild()}
