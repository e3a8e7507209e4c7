"""`toka proof` and `toka verify --since-head`, checked as a third party would: the proof with the
lines docs/tamper-evidence.md gives, run exactly as written there."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_support import ROOT, home, invoke, invoke_json
from cryptography.exceptions import InvalidSignature
from test_tamper_evidence import database, reseal, stop, write_log

from daemon.client.sync import Client


def documented_check() -> Any:
    """``check_proof`` as the doc defines it, between its markers."""
    text = (ROOT / "docs" / "tamper-evidence.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- proof-check: start -->\n```python\n(.*?)```\n<!-- proof-check: end -->", text, re.S)
    assert block is not None
    scope: dict[str, Any] = {}
    exec(block.group(1), scope)  # noqa: S102 - the documented lines, run as a reader would
    return scope["check_proof"]


def event_id(seq: int) -> str:
    with Client() as client:
        return str(client.call("events.get", seq=seq)["id"])


def test_a_proof_checks_with_the_documented_lines_and_a_changed_one_does_not() -> None:
    write_log()
    check_proof = documented_check()
    key = invoke_json("heads")["key"]

    for seq in (1, 5, 12):
        proof = invoke_json("proof", event_id(seq))
        check_proof(proof, event_id(seq), key)

    proof = invoke_json("proof", event_id(5))
    with pytest.raises(AssertionError):
        check_proof(proof, event_id(6), key)  # another event
    forged = {**proof, "path": [("00" * 32), *proof["path"][1:]]}
    with pytest.raises(AssertionError):
        check_proof(forged, event_id(5), key)
    with pytest.raises(InvalidSignature):
        check_proof({**proof, "head": {**proof["head"], "time": "2030-01-01T00:00:00.000000Z"}}, event_id(5), key)


def test_a_proof_of_an_event_newer_than_the_last_head_signs_a_head_first() -> None:
    write_log()
    with Client() as client:
        appended = client.append([{"session": "d", "kind": "message", "payload": {}}])[0]

    proof = invoke_json("proof", appended["id"][:12])

    assert proof["tree_size"] == proof["head"]["size"] == appended["seq"] == 13
    documented_check()(proof, appended["id"], invoke_json("heads")["key"])


def test_a_pruned_event_is_still_proved() -> None:
    with Client() as client:
        first = client.append([{"session": "a", "kind": "message", "payload": {}, "ts": 1_600_000_000}])[0]
        client.append([{"session": "a", "kind": "message", "payload": {"n": 1}}])
    assert invoke("prune", "--before", "2021-01-01").exit_code == 0

    proof = invoke_json("proof", first["id"])

    assert proof["event"]["pruned"] and proof["event"]["seq"] == 1
    documented_check()(proof, first["id"], invoke_json("heads")["key"])


def test_since_head_proves_the_log_extends_an_earlier_head(tmp_path: Path) -> None:
    write_log()
    old = invoke_json("heads")["heads"][-1]
    kept = tmp_path / "head.json"
    kept.write_text(json.dumps(old))
    write_log(rounds=2)

    for given in (str(old["size"]), old["root"][:10], str(kept)):
        result = invoke_json("verify", "--since-head", given)
        assert result["old"] == old and result["new"]["size"] == old["size"] + 6 and result["proof"]


def test_since_head_fails_with_exit_5_once_a_covered_event_was_resealed() -> None:
    write_log()
    old = invoke_json("heads")["heads"][-1]
    stop()
    with database() as db:
        reseal(db, "a", 4, {"n": "forged"})
        db.execute("DELETE FROM merkle")  # rebuilt from the forged log at open
    with Client() as client:
        client.append([{"session": "d", "kind": "message", "payload": {}}])

    result = invoke("verify", "--since-head", str(old["size"]))

    assert result.exit_code == 5
    assert "refuses to sign heads" in result.stderr  # the rebuilt tree does not extend the last head


def test_since_head_checks_the_events_not_only_the_stored_tree() -> None:
    write_log()
    old = invoke_json("heads")["heads"][-1]
    stop()
    with database() as db:
        reseal(db, "a", 4, {"n": "forged"})  # the stored tree still holds what was signed
    assert invoke("admin", "rebuild").exit_code == 0
    with Client() as client:
        client.append([{"session": "d", "kind": "message", "payload": {}}])

    result = invoke("verify", "--since-head", str(old["size"]))

    assert result.exit_code == 5, result.stdout
    assert "does not extend" in result.stderr and "seq 4, replaced" in result.stderr


def test_since_head_takes_a_head_signed_by_this_logs_key_only(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    write_log()
    old = invoke_json("heads")["heads"][-1]
    other = Ed25519PrivateKey.generate()
    message = f"toka-tree-head-v1\n{old['size']}\n{old['root']}\n{old['time']}\n".encode()
    public = other.public_key().public_bytes_raw().hex()
    stranger = tmp_path / "head.json"
    stranger.write_text(json.dumps({**old, "key": public, "signature": other.sign(message).hex()}))

    result = invoke("verify", "--since-head", str(stranger))

    assert result.exit_code == 5 and "not this log's heads.key" in result.stderr


def test_since_head_reads_a_witness_file_and_the_heads_listing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    witness = tmp_path / "witness.jsonl"
    monkeypatch.setenv("TOKA_WITNESS_PATH", str(witness))
    write_log(rounds=1)
    write_log(rounds=1)
    listing = tmp_path / "heads.json"
    listing.write_text(invoke("heads", "--json").stdout)
    assert [json.loads(line)["size"] for line in witness.read_text().splitlines()] == [3, 6]

    for given, size in ((str(witness), 6), (f"{witness}:3", 3), (str(listing), 6)):
        result = invoke_json("verify", "--since-head", given)
        assert result["old"]["size"] == size and result["new"]["size"] == 6, given
    missing = invoke("verify", "--since-head", f"{witness}:4")
    assert missing.exit_code == 2 and "no head of size 4" in missing.stderr


def test_since_head_names_what_it_does_not_understand() -> None:
    write_log()
    assert home().joinpath("heads.jsonl").exists()

    result = invoke("verify", "--since-head", "not-a-head")
    missing = invoke("verify", "--since-head", "999")

    assert result.exit_code == 2 and "hint:" in result.stderr
    assert missing.exit_code == 3 and "no signed head matches" in missing.stderr


def test_a_number_is_a_seq_and_an_id_prefix_of_digits_takes_id() -> None:
    with Client() as client:
        for n in range(200):  # until an event's id starts with four digits (about one in seven)
            client.record("digits", "note.decision", {"n": n})
            ids = [str(e["id"]) for e in client.iter_events(session="digits")]
            numeric = [i for i in ids if i[:4].isdigit() and sum(o.startswith(i[:4]) for o in ids) == 1]
            if numeric and len(ids) >= 2:  # seqs 1 and 2 are proved below
                break
    assert numeric
    for seq in (1, 2):
        assert invoke_json("proof", str(seq))["event"]["seq"] == seq
    assert invoke_json("proof", numeric[0][:4], "--id")["event"]["id"] == numeric[0]
    missing = invoke("proof", "99999")
    assert missing.exit_code == 3 and "99999" in missing.stderr
