"""`toka proof`, `toka heads` and `toka verify --since-head`: the signed tree heads
(docs/tamper-evidence.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from store.errors import UsageError
from toka_cli.call import call_and_show, connection
from toka_cli.options import JsonOpt, LimitOpt
from toka_cli.output import console, print_view
from toka_cli.render import key_values, table

if TYPE_CHECKING:
    from daemon.contract.results_heads import ConsistencyProof, HeadList, HeadsReset, InclusionProof

SinceHeadOpt = Annotated[
    str | None,
    typer.Option(
        "--since-head",
        help="Check only that the log still extends this signed head: a size, a root or its prefix, or a"
        " file of heads (one as JSON, `toka heads --json`'s output, or a witness's JSON lines: its last"
        " head, or FILE:SIZE), rebuilt from the log's events and proved to the latest head.",
    ),
]


def proof(
    event: Annotated[
        str, typer.Argument(help="The event: its seq (a number such as 4518), or its id or a unique prefix of one.")
    ],
    by_id: Annotated[
        bool, typer.Option("--id", help="Read EVENT as an id or its prefix, even when it is all digits.")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Print an inclusion proof of an event in the log's latest signed head.

    A number is the event's seq; an id prefix made of digits only needs --id. Anyone holding
    the head and its public key can check the proof with a few lines of Python
    (docs/tamper-evidence.md); a head is signed first when the event is newer than the last.
    Exit code 5 when the stored tree does not hash to the signed root.
    """
    if event.isdigit() and not by_id:
        with connection() as client:
            event = client.call("events.get", seq=int(event))["id"]
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


ResetOpt = Annotated[
    bool,
    typer.Option(
        "--reset",
        help="Start the signed history afresh when the daemon refuses to sign (`toka verify` says why):"
        " the heads file is moved aside, the reset recorded beside heads.key, the log signed as it is."
        " Needs --yes.",
    ),
]
YesOpt = Annotated[bool, typer.Option("--yes", help="Confirm --reset.")]


def heads(limit: LimitOpt = 20, reset: ResetOpt = False, yes: YesOpt = False, json_: JsonOpt = False) -> None:
    """The latest signed tree heads, from the heads file and the witness (oldest first)."""
    if reset:
        if not yes:
            raise UsageError(
                "--reset starts the signed history afresh: what the old heads prove is no longer checked",
                "run `toka verify` first; then `toka heads --reset --yes`",
            )
        call_and_show("heads.reset", json_, _reset, confirm=True)
        return
    if yes:
        raise UsageError("--yes confirms --reset, and is given without it", "`toka heads --reset --yes`")
    call_and_show("heads.list", json_, _listed, limit=limit)


def _reset(result: HeadsReset) -> None:
    kept = f"; the heads file was kept as {result['kept_as']}" if result["kept_as"] else ""
    head = result["head"]
    signed = "nothing to sign yet" if head is None else f"signed {head['size']} events at {head['time']}"
    console().print(
        f"reset: the signed history reached {result['signed_before']} events{kept}; {signed}", highlight=False
    )


def _listed(result: HeadList) -> None:
    grid = table("size", "time", "root", "key")
    for head in result["heads"]:
        grid.add_row(str(head["size"]), head["time"], head["root"][:16], head["key"][:16])
    print_view(grid)
    if not result["heads"]:
        console().print("no signed heads yet")
    if result["untrusted"]:
        console().print(
            f"{result['untrusted']} lines of the heads file or witness are not heads signed by this key"
            " (not listed; `toka verify` names them)",
            highlight=False,
        )


def since_head(head: str, json_: bool) -> None:
    """`toka verify --since-head HEAD`: the consistency proof from that head to the latest."""
    call_and_show("heads.consistency", json_, _consistent, since=_head_argument(head))


def _head_argument(text: str) -> Any:
    if text.isdigit():
        return int(text)
    path, _, size = text.rpartition(":")
    if path and size.isdigit() and Path(path).is_file():
        return _head_in_file(Path(path), int(size))
    if Path(text).is_file():
        return _head_in_file(Path(text), None)
    if all(c in "0123456789abcdefABCDEF" for c in text):
        return text
    raise UsageError(f"{text!r} is neither a size, a root, nor a file", "list the heads with `toka heads`")


def _head_in_file(path: Path, size: int | None) -> dict[str, Any]:
    """The head of ``size`` (else the last) in a file holding one head as JSON, the output of
    `toka heads --json` (an object with a list, or the list), or heads as JSON lines (the heads
    file, a witness's)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", "give a file holding heads as JSON") from None
    try:
        found = json.loads(text)
    except ValueError:
        try:
            found = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as exc:
            raise UsageError(
                f"{path} holds neither JSON nor JSON lines ({exc})", "give a head kept from `toka heads --json`"
            ) from None
    if isinstance(found, dict) and isinstance(found.get("heads"), list):
        found = found["heads"]
    heads = found if isinstance(found, list) else [found]
    heads = [h for h in heads if isinstance(h, dict) and (size is None or h.get("size") == size)]
    if not heads:
        which = "no head" if size is None else f"no head of size {size}"
        raise UsageError(f"{path} holds {which}", "`toka heads` lists the heads; PATH:SIZE picks one of a file")
    head: dict[str, Any] = heads[-1]
    return head


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
