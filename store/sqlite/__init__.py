"""The SQLite backend: one WAL database file, written through aiosqlite.

The store itself is ``store.py``; the parts it runs lie beside it, each named as the PostgreSQL
backend's part that does the same (store/postgres/): ``connect``, ``schema``, ``append``,
``reads``, ``projections``, ``usage``, ``search``, ``verify``, ``tree``, ``health``. What only a
file needs (``hop``, ``integrity``, ``retention``, ``salvage``, ``recover``, ``searcher``) is
SQLite's own.
"""
