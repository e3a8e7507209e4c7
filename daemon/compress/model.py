"""What a compression is: the range of a session it covers, what replaces the range, and its figures.

:class:`Compression` is the payload of a ``compression`` event (``to_json()``; docs/compression.md
gives the shape). A compression describes; it never deletes or changes an event. The working
context of the session is then the summary, the events of the range kept verbatim
(``kept_seqs``), and every event after ``last_seq``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Bumped when the payload's shape changes in a way a reader must know about.
COMPRESSION_FORMAT = 1
# A payload whose canonical JSON is larger than this is left out of a summary and cited by
# digest: a summary is read by a model with a budget, and `toka blob show` brings the payload back.
ELIDE_BYTES = 2048


@dataclass(frozen=True, slots=True)
class Elided:
    """A large payload the summary cites instead of quoting: ``[blob <digest> <size>]``.

    ``digest`` is the payload's blake3 (the event's ``digest``, the key of the blob table), ``size``
    the length in bytes of its canonical JSON, ``kind`` and ``seq`` those of the event it belongs to.
    """

    digest: str
    size: int
    kind: str
    seq: int

    @property
    def citation(self) -> str:
        return f"[blob {self.digest} {self.size}]"

    def to_json(self) -> dict[str, Any]:
        return {"digest": self.digest, "size": self.size, "kind": self.kind, "seq": self.seq}


@dataclass(frozen=True, slots=True)
class SummarizerUsed:
    """Which summarizer wrote the summary.

    ``kind`` is ``"extractive"`` (the built-in one) or ``"external"``. ``command`` is the external
    command line as configured (after redaction), also when it failed; ``fallback`` is the reason it
    failed, when the extractive summarizer stood in for it. ``clipped``: the external summary was
    longer than the summary budget and was cut to it.
    """

    kind: str
    command: str | None = None
    fallback: str | None = None
    clipped: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "command": self.command,
            "fallback": None if self.fallback is None else {"reason": self.fallback},
            "clipped": self.clipped,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SummarizerUsed:
        fallback = data.get("fallback")
        return cls(
            data["kind"],
            data.get("command"),
            fallback["reason"] if isinstance(fallback, dict) else None,
            bool(data.get("clipped", False)),
        )


@dataclass(frozen=True, slots=True)
class Compression:
    """The result of compressing a session's events, and the payload of a ``compression`` event.

    - ``policy``: fifo, window, summarize or importance.
    - ``first_seq``, ``last_seq``, ``first_event``, ``last_event``: the compressed range, always a
      prefix of the events given; None when nothing needed compressing (everything fits).
    - ``events_in_range``: how many events the range holds.
    - ``summary``: what replaces the range. For fifo and window, a one-line note of what was
      dropped; for summarize and importance, the summary (empty only when the range is).
    - ``kept_seqs``: events inside the range that stay in the context verbatim, in log order
      (importance only).
    - ``summarizer``: which summarizer wrote the summary (None for fifo and window).
    - ``elided``: the large payloads the summary cites as ``[blob <digest> <size>]``.
    - ``target_tokens``: the budget asked for; ``tokens_before``: all the events given;
      ``tokens_after``: the summary, the kept events and the events after the range;
      ``summary_tokens``: the summary alone. All measured with the caller's estimator.
    """

    policy: str
    first_seq: int | None
    last_seq: int | None
    first_event: str | None
    last_event: str | None
    events_in_range: int
    summary: str
    kept_seqs: tuple[int, ...]
    summarizer: SummarizerUsed | None
    elided: tuple[Elided, ...]
    target_tokens: int
    tokens_before: int
    tokens_after: int
    summary_tokens: int

    @property
    def compressed(self) -> bool:
        """False when everything already fitted and the range is empty."""
        return self.events_in_range > 0

    @property
    def ratio(self) -> float:
        """tokens_after / tokens_before (1.0 for an empty session), to 4 places."""
        return 1.0 if self.tokens_before == 0 else round(self.tokens_after / self.tokens_before, 4)

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def fits(self) -> bool:
        return self.tokens_after <= self.target_tokens

    def to_json(self) -> dict[str, Any]:
        """The ``compression`` event's payload (docs/compression.md)."""
        return {
            "format": COMPRESSION_FORMAT,
            "policy": self.policy,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "first_event": self.first_event,
            "last_event": self.last_event,
            "events_in_range": self.events_in_range,
            "summary": self.summary,
            "kept_seqs": list(self.kept_seqs),
            "summarizer": None if self.summarizer is None else self.summarizer.to_json(),
            "elided": [e.to_json() for e in self.elided],
            "target_tokens": self.target_tokens,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "summary_tokens": self.summary_tokens,
            "tokens_saved": self.tokens_saved,
            "ratio": self.ratio,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Compression:
        """A stored payload read back (the derived figures are recomputed, not read)."""
        summarizer = data.get("summarizer")
        return cls(
            policy=data["policy"],
            first_seq=data.get("first_seq"),
            last_seq=data.get("last_seq"),
            first_event=data.get("first_event"),
            last_event=data.get("last_event"),
            events_in_range=data["events_in_range"],
            summary=data["summary"],
            kept_seqs=tuple(data.get("kept_seqs", ())),
            summarizer=SummarizerUsed.from_json(summarizer) if isinstance(summarizer, dict) else None,
            elided=tuple(Elided(e["digest"], e["size"], e["kind"], e["seq"]) for e in data.get("elided", ())),
            target_tokens=data["target_tokens"],
            tokens_before=data["tokens_before"],
            tokens_after=data["tokens_after"],
            summary_tokens=data.get("summary_tokens", 0),
        )
