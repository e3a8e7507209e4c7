"""``hooks.answer`` (docs/protocol.md): record a hook's event and answer with the context the
agent is to be given (daemon/inject/service.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.contract import results
from daemon.inject.service import Injector
from daemon.rpc.registry import Call, Ops

OPS = Ops(Injector)


@dataclass(frozen=True, slots=True)
class Answer:
    event: dict[str, Any]  # as one event of events.append


@OPS.op("hooks.answer", Answer)
async def hooks_answer(injector: Injector, request: Answer, call: Call) -> results.HookAnswer:
    """Append the hook's event; ``context``: what the agent is to be given, or null."""
    answer = await injector.answer(request.event)
    await injector.lifecycle.evaluated(answer["seq"])
    return answer
