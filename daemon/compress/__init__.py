"""Compression: what replaces the older part of a session's context when it grows too large.

A pure library: :func:`compress` takes a session's events (those after its last compressed range,
in log order), a policy, a token target and the caller's token estimator, and returns a
:class:`Compression`: the compressed range (always a prefix of the events), the summary or note
that replaces it, the events of the range kept verbatim, and the figures. The daemon stores
``Compression.to_json()`` as a ``compression`` event; no event is ever deleted or changed.
No store, no sockets, no clock: the only I/O is running an external summarizer when one is
configured (``external``). docs/compression.md describes the policies and the payload.
"""

from __future__ import annotations

from daemon.compress.engine import KEEP_LAST, SCORES, SUMMARY_SHARE, compress, identity, scores, summary_event
from daemon.compress.external import ExternalFailure, run_external
from daemon.compress.model import COMPRESSION_FORMAT, ELIDE_BYTES, POLICIES, Compression, Elided, SummarizerUsed
from daemon.compress.summary import Summary, extractive_summary
from daemon.compress.transcript import transcript

__all__ = [
    "COMPRESSION_FORMAT",
    "ELIDE_BYTES",
    "KEEP_LAST",
    "POLICIES",
    "SCORES",
    "SUMMARY_SHARE",
    "Compression",
    "Elided",
    "ExternalFailure",
    "Summary",
    "SummarizerUsed",
    "compress",
    "extractive_summary",
    "identity",
    "run_external",
    "scores",
    "summary_event",
    "transcript",
]
