"""Persistence: the event log and its projections, behind one interface with two backends.

Import what you need from its module (``store.sqlite.store``, ``store.events``, ...): this package
imports nothing itself, so that the light client in ``daemon.client.sync`` can use ``store.errors``
without pulling in asyncio, aiosqlite or blake3.
"""
