"""Fixtures for the search suite, by words and by meaning: the store suite's own (one test, every
backend), loaded from tests/store/conftest.py so that both suites open, use and close stores the
same way."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "store_suite_fixtures", Path(__file__).parent.parent / "store" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

loop = _fixtures.loop
pytest_pyfunc_call = _fixtures.pytest_pyfunc_call
backend = _fixtures.backend
store = _fixtures.store
db_path = _fixtures.db_path
sqlite_store = _fixtures.sqlite_store
open_sqlite = _fixtures.open_sqlite
