"""`toka verify` against the signed heads: every head that can be found, checked, then the log
checked against those that hold (store/merkle_check.py).

The heads come from ``heads.jsonl`` and, when one is set, the witness file; each must carry a
good signature by this toka's key (heads.key). A head the witness holds and the heads file does
not means the file was cut. Problems about heads themselves are reported at the seq of the
head's size, with the root as their id.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from daemon.config import StoreSettings
from daemon.core import Core
from daemon.heads.keys import load_key, signature_holds
from daemon.heads.record import SignedHead, read_heads
from daemon.heads.witness import Witness
from store.base import MAX_PROBLEMS, Problem, VerifyReport
from store.merkle import SignedRoot
from store.merkle_check import CheckedLog


@dataclass(slots=True)
class HeadsReport:
    """The ``heads`` part of verify's answer (docs/json.md)."""

    heads: int = 0  # distinct heads found
    valid: int = 0  # of which signed by this toka's key
    matched: int = 0  # of which the log still matches
    covered: int = 0  # the largest size of a head the log matches
    size: int = 0  # the log's last seq
    latest: SignedHead | None = None
    problems: list[Problem] = field(default_factory=list)
    problem_count: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "heads": self.heads,
            "valid": self.valid,
            "matched": self.matched,
            "covered": self.covered,
            "unsigned": max(0, self.size - self.covered),
            "latest": None if self.latest is None else self.latest.to_json(),
        }


def _problem(head: SignedHead, what: str, detail: str) -> Problem:
    return Problem(head.size, head.root, "", what, f"{head.name}: {detail}")  # type: ignore[arg-type]


def gather(core: Core) -> tuple[list[SignedHead], list[Problem]]:
    """Every distinct head of the heads file and the witness file, in size order, with what is
    wrong with the files themselves."""
    problems = []
    heads, bad = read_heads(core.paths.heads_file)
    if bad:
        problems.append(Problem(0, "", "", "signed", f"{bad} lines of {core.paths.heads_file} are not signed heads"))
    witness = Witness(core.settings[StoreSettings]).path
    if witness is not None:
        witnessed, _ = read_heads(witness)
        local = set(heads)
        for head in witnessed:
            if head not in local:
                problems.append(_problem(head, "truncated", f"the witness {witness} holds it, the heads file does not"))
        heads = list({*heads, *witnessed})
    return sorted(set(heads), key=lambda h: (h.size, h.time)), problems


def _key(path: Path) -> bytes | None:
    key = load_key(path, create=False)
    return None if key is None else key.public


async def check_heads(core: Core, refused: str | None = None) -> HeadsReport | None:
    """The log checked against its signed heads; None when it keeps no tree. ``refused``: why
    the daemon will not sign the log as it is (daemon/heads/service.py), a problem of its own."""
    store = core.store
    if not core.settings[StoreSettings].signed_heads or not isinstance(store, CheckedLog) or await store.tree() is None:
        return None
    heads, problems = await asyncio.to_thread(gather, core)
    public = await asyncio.to_thread(_key, core.paths.heads_key)
    report = HeadsReport(heads=len(heads))
    good: list[SignedHead] = []
    for head in heads:
        if public is None or head.key != public.hex():
            problems.append(_problem(head, "signed", f"signed by key {head.key[:16]}, not this toka's heads.key"))
        elif not signature_holds(public, bytes.fromhex(head.signature), head.message):
            problems.append(_problem(head, "signed", "its signature does not hold: the head was altered or forged"))
        else:
            good.append(head)
    report.valid = len(good)
    report.latest = good[-1] if good else None
    assert isinstance(store, CheckedLog)
    tree = await store.check_tree([SignedRoot(h.size, bytes.fromhex(h.root), h.name) for h in good])
    assert tree is not None
    report.matched, report.covered, report.size = tree.matched, tree.covered, tree.size
    if refused is not None:
        detail = f"the daemon refuses to sign heads: {refused}; once you know why, `toka heads --reset --yes`"
        problems.append(Problem(tree.covered + 1, "", "", "refused", detail))
    report.problems = sorted([*problems, *tree.problems], key=lambda p: p.seq)[:MAX_PROBLEMS]
    report.problem_count = len(problems) + tree.problem_count
    return report


def merged(report: VerifyReport, heads: HeadsReport | None) -> VerifyReport:
    """The chain check's report with the heads check's problems, in seq order."""
    if heads is None or not heads.problem_count:
        return report
    problems = sorted([*report.problems, *heads.problems], key=lambda p: p.seq)[:MAX_PROBLEMS]
    return replace(report, problems=tuple(problems), problem_count=report.problem_count + heads.problem_count)
