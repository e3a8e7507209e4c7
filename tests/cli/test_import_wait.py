"""`toka import --wait` returns once the derived tables hold what was imported: the search index
has the text, read from the database file itself (docs/storage.md, "The derived tables follow
behind")."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from cli_support import toka


def test_import_wait_returns_once_the_search_index_holds_the_text(toka_home: Path, tmp_path: Path) -> None:
    word = "zanzibarquokka"
    records = [
        {"type": "user", "uuid": f"u{n}", "sessionId": "5e0d9a3c-0b1e-4c55-9a43-0d6f2b1f9e12",
         "timestamp": f"2026-03-01T10:00:{n:02d}.000Z",
         "message": {"role": "user", "content": f"message {n} about the {word} {n}"}}
        for n in range(40)
    ]  # fmt: skip
    path = tmp_path / "wait.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = toka("import", str(path), "--wait", "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["created"] == 40
    # Read from the file itself, as no daemon read would (a search applies what is left first).
    with closing(sqlite3.connect(f"file:{toka_home}/toka.db?mode=ro", uri=True)) as db:
        hits = db.execute("SELECT count(*) FROM search_index WHERE search_index MATCH ?", (word,)).fetchone()[0]
    assert hits == 40
    found = toka("search", word, "--json", "--limit", "100")
    assert found.returncode == 0, found.stderr
    assert len(json.loads(found.stdout)["hits"]) == 40
