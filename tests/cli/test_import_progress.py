"""Import progress: counted in bytes read, so the bar moves within a large file too."""

from __future__ import annotations

import json
from pathlib import Path

from daemon.batching import MAX_BATCH_EVENTS
from daemon.client.sync import Client
from daemon.client.transfer import import_files


def test_progress_moves_within_a_multi_batch_file_and_ends_at_the_total(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    lines = [
        json.dumps({"session": "big", "kind": "message", "key": f"k{i}", "payload": {"n": i}}) for i in range(3500)
    ]
    big.write_text("\n".join(lines) + "\n")
    small = tmp_path / "small.jsonl"
    small.write_text('{"session": "small", "kind": "message", "payload": {"n": 0}}\n')
    total = big.stat().st_size + small.stat().st_size
    calls: list[tuple[int, int]] = []
    with Client() as client:
        summary = import_files(client, [big, small], progress=lambda done, of: calls.append((done, of)))
    assert summary.created == 3501
    assert all(of == total for _, of in calls)
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[-1] == total
    within_big = [d for d in done if 0 < d < big.stat().st_size]
    assert len(within_big) >= 3500 // MAX_BATCH_EVENTS  # one step per request sent, before the file ends
    assert len(set(done)) == len(done)  # every call moves the bar
