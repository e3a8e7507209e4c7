"""The pool suite's fixtures."""

from __future__ import annotations

import pytest
from pool_support import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()
