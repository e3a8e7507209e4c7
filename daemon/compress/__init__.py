"""Compression: what replaces the older part of a session's context when it grows too large.

A pure library: :func:`compress` takes a session's events (those after its last compressed range,
in log order), a policy, a token target and the caller's token estimator, and returns a
:class:`Compression`: the compressed range (always a prefix of the events), the summary or note
that replaces it, the events of the range kept verbatim, and the figures. The daemon stores
``Compression.to_json()`` as a ``compression`` event; no event is ever deleted or changed.
No store, no sockets, no clock: the only I/O is running an external summarizer when one is
configured (``external``). docs/compression.md describes the policies and the payload.

The policies are named in daemon/contract/policies.py (``CompressionPolicy``), which the settings,
the CLI and the MCP server read without loading the engine. ``engine.compress`` is the entry point.
"""
