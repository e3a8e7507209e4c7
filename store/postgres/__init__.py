"""The PostgreSQL backend: one log shared by the daemons of a whole team (docs/postgres.md).

The store itself is ``store.py``; the parts it runs lie beside it, named as the SQLite backend's
part that does the same (store/sqlite/). psycopg is imported by this package only.
"""
