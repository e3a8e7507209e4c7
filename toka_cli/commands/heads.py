"""`toka proof`, `toka heads` and `toka verify --since-head`: the signed tree heads
(docs/tamper-evidence.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from store.errors import UsageError
from toka_cli.call import call_and_show
from toka_cli.options import JsonOpt, LimitOpt
from toka_cli.output import console, print_view
from toka_cli.render import key_values, table

if TYPE_CHECKING:
    from daemon.client.results_heads import ConsistencyProof, HeadList, InclusionProof

SinceHeadOpt = Annotated[
    str | None,
    typer.Option(
        "--since-head",
        help="Check only that the log still extends this signed head (a size, a root or its prefix, or a"
        " file holding the head as JSON): a consistency proof to the latest head.",
    ),
]


def proof(
    event: Annotated[str, typer.Argument(help="Event id, or a unique prefix of one.")],
    json_: JsonOpt = False,
) -> None:
    """Print an inclusion proof of an event in the log's latest signed head.

    Anyone holding the head and its public key can check it with a few lines of Python
    (docs/tamper-evidence.md); a head is signed first when the event is newer than the last.
    Exit code 5 when the stored tree does not hash to the signed root.
    """
    call_and_show("heads.proof", json_, _proved, event=event)


def _proved(result: InclusionProof) -> None:
    found, head = result["event"], result["head"]
    rows: list[tuple[str, object]] = [
        (
            "event",
            f"{found['id']} (seq {found['seq']}, session {found['session']}{', pruned' if found['pruned'] else ''})",
        ),
        ("leaf", f"{result['leaf_index']} of {result['tree_size']}: {result['leaf_hash']}"),
        ("root", head["root"]),
        ("signed", f"{head['time']} by key {head['key']}"),
        ("signature", head["signature"]),
    ]
    rows += [(f"path {i}", node) for i, node in enumerate(result["path"])]
    print_view(key_values(rows), highlight=False)
    console().print("ok: the proof leads from the event to the signed root", highlight=False)


def heads(limit: LimitOpt = 20, json_: JsonOpt = False) -> None:
    """The latest signed tree heads, from the heads file and the witness (oldest first)."""
    call_and_show("heads.list", json_, _listed, limit=limit)


def _listed(result: HeadList) -> None:
    grid = table("size", "time", "root", "key")
    for head in result["heads"]:
        grid.add_row(str(head["size"]), head["time"], head["root"][:16], head["key"][:16])
    print_view(grid)
    if not result["heads"]:
        console().print("no signed heads yet")


def since_head(head: str, json_: bool) -> None:
    """`toka verify --since-head HEAD`: the consistency proof from that head to the latest."""
    call_and_show("heads.consistency", json_, _consistent, since=_head_argument(head))


def _head_argument(text: str) -> Any:
    if text.isdigit():
        return int(text)
    path = Path(text)
    if path.is_file():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read a head from {path}: {exc}", "give a file holding one head as JSON") from None
    if all(c in "0123456789abcdefABCDEF" for c in text):
        return text
    raise UsageError(f"{text!r} is neither a size, a root, nor a file", "list the heads with `toka heads`")


def _consistent(result: ConsistencyProof) -> None:
    old, new = result["old"], result["new"]
    console().print(
        f"ok: the head of {new['time']} ({new['size']} events) extends the head of {old['time']}"
        f" ({old['size']} events): {len(result['proof'])} hashes prove it",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command()(proof)
    app.command()(heads)
