"""`toka integrate codex`: toka's hooks in Codex's hooks.json, recorded as trusted in config.toml the
way Codex records it, the user's hooks and their trust kept, and only toka's taken out again."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from test_integrate_mcp import CODEX_TOML, TOKA, integrate, report
from typer.testing import CliRunner

from toka_cli.integrate.codex_hooks import trusted_hash
from toka_cli.integrate.inbox import inbox_command
from toka_cli.main import app

COMMAND = f"{TOKA} hook codex"
# The events whose answer is context for the model run the hook; the others drop their payload
# into toka's inbox.
ANSWERING = ["SessionStart", "UserPromptSubmit", "PreCompact"]


def command_of(event: str) -> str:
    """What toka's hook of ``event`` runs (the inbox command names the data dir of this test's HOME)."""
    return COMMAND if event in ANSWERING else inbox_command("codex")


EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
]
LABELS = [
    "session_start",
    "user_prompt_submit",
    "pre_tool_use",
    "post_tool_use",
    "pre_compact",
    "post_compact",
    "stop",
    "subagent_start",
    "subagent_stop",
    "session_end",
]
# The user's own hooks: one before toka's on SessionStart, one on an event toka leaves alone.
MINE = {
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine"}]}],
        "PermissionRequest": [{"hooks": [{"type": "command", "command": "./approve.sh", "timeout": 5}]}],
    }
}


@pytest.fixture
def codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """CODEX_HOME, holding the user's config.toml."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "config.toml").write_text(CODEX_TOML)
    return tmp_path / "codex"


def states(codex: Path) -> dict[str, Any]:
    state: dict[str, Any] = tomllib.loads((codex / "config.toml").read_text()).get("hooks", {}).get("state", {})
    return state


def handlers(codex: Path, event: str) -> list[list[dict[str, Any]]]:
    return [group["hooks"] for group in json.loads((codex / "hooks.json").read_text())["hooks"][event]]


# The ``currentHash`` Codex 0.171 reported for each hook (app-server ``hooks/list``).
MEASURED = [
    ("SessionStart", {"command": "touch /tmp/cxh/ss-a"}, None,
     "73b0ed63622f3bacfcd5cb272257319bc0024be50573a4b17d6a1a1fe24ca811"),
    ("PreToolUse", {"command": "touch /tmp/cxh/pre"}, "*",
     "ffa3c3062a4afb460f6d0e2399057539f2a0c6f3eae595005038a6665938a427"),
    ("Stop", {"command": "touch /tmp/cxh/stop", "timeout": 30}, None,
     "4ccf93f2b3c85faeeaaaf74aab2e37a953fc17e08fe939412b69e3eadde74fe0"),
    ("SessionStart", {"command": "touch /tmp/cxh/ss-a", "statusMessage": "loading", "async": True, "timeout": 7}, None,
     "d2883c5604ea33a290a160e3fbbd50a682868ffe20042885696dfff6ac2d61d1"),
    ("SessionEnd", {"command": "touch /tmp/cxh/end", "timeout": 10}, None,
     "faf9f6ea8f804840b42bdf666e5027397a191c7d215055ad392b0698ee1e0af4"),
    ("SessionEnd", {"command": "a b"}, "abc",
     "d48fb4cccbf2a6d542fa9aea07ab376902dfc128b3a5df357d15a6059e0fd02f"),
    ("PreCompact", {"command": "a b"}, None,
     "6e4c44acdc7272211ba5ea55007ea6eecb64e7e2d03a4f1afaed8cdd850ad247"),
    ("PostCompact", {"command": "a b"}, "x",
     "40a42f3cfa4c639bd4d9b9677e40bf992eace0dc1321d77235f909e9f3463528"),
    ("UserPromptSubmit", {"command": "a b"}, "abc",
     "bda053d56b014131625b9d67d8329c2b95d005b2c3f728f4c79bd54600c5b4db"),
    ("Stop", {"command": "a b"}, "abc",
     "eb810b0b7791cb25936c64d31b583c7e765e556e55955e2e819aba751b77dcd8"),
    ("SubagentStart", {"command": "a b"}, "abc",
     "6ae2d901a4f84af1f449cdb26d2348a8f1c641e9ff5e72c7be1010aeba8ed8fb"),
    ("SubagentStop", {"command": "a b"}, None,
     "6c83724ce372343d5716bfdd4228e3807b8218e542b8f5f2545fbf9b06059428"),
]  # fmt: skip


@pytest.mark.parametrize(("event", "handler", "matcher", "expected"), MEASURED)
def test_the_hash_is_the_one_codex_computes(event: str, handler: dict[str, Any], matcher: Any, expected: str) -> None:
    """Each expected hash is the ``currentHash`` Codex 0.171 reported for that hook (app-server
    ``hooks/list``): timeouts filled in (SessionEnd's held to 1..3 s), the matcher of
    UserPromptSubmit and Stop left out."""
    assert trusted_hash(event, {"type": "command", **handler}, matcher) == f"sha256:{expected}"


def test_a_hook_per_event_is_added_and_recorded_as_trusted(codex: Path) -> None:
    result = report(integrate("codex"))
    hooks = result["hooks"]
    assert hooks == {
        "file": str(codex / "hooks.json"),
        "command": COMMAND,
        "events": EVENTS,
        "updated": [],
        "trust_file": str(codex / "config.toml"),
        "trusted": EVENTS,
        "moved": 0,
        "disabled": [],
        "inline": False,
        "inbox": True,
    }
    document = json.loads((codex / "hooks.json").read_text())
    assert list(document) == ["hooks"] and list(document["hooks"]) == EVENTS
    for event in EVENTS:
        assert document["hooks"][event] == [{"hooks": [{"type": "command", "command": command_of(event)}]}]
    source = f"{codex.resolve()}/hooks.json"
    assert states(codex) == {
        f"{source}:{label}:0:0": {
            "trusted_hash": trusted_hash(event, {"type": "command", "command": command_of(event)})
        }
        for event, label in zip(EVENTS, LABELS, strict=True)
    }
    # Codex's own layout: a table per hook, after the user's settings, which are as they were.
    text = (codex / "config.toml").read_text()
    assert f'\n[hooks.state."{source}:session_start:0:0"]\ntrusted_hash = "sha256:' in text
    assert "# My Codex settings: keep this comment." in text and "[model_providers.fake]" in text


def test_the_users_hooks_and_their_trust_are_kept_and_tokas_go_after_them(codex: Path) -> None:
    (codex / "hooks.json").write_text(json.dumps(MINE))
    source = f"{codex.resolve()}/hooks.json"
    theirs = f'\n[hooks.state."{source}:session_start:0:0"]\nenabled = false\ntrusted_hash = "sha256:mine"\n'
    (codex / "config.toml").write_text(CODEX_TOML + theirs)
    integrate("codex")
    document = json.loads((codex / "hooks.json").read_text())
    assert list(document["hooks"]) == ["SessionStart", "PermissionRequest", *EVENTS[1:]]
    assert document["hooks"]["SessionStart"] == [
        MINE["hooks"]["SessionStart"][0],
        {"hooks": [{"type": "command", "command": COMMAND}]},
    ]
    assert document["hooks"]["PermissionRequest"] == MINE["hooks"]["PermissionRequest"]
    state = states(codex)
    assert state[f"{source}:session_start:0:0"] == {"enabled": False, "trusted_hash": "sha256:mine"}
    assert state[f"{source}:session_start:1:0"] == {
        "trusted_hash": trusted_hash("SessionStart", {"type": "command", "command": COMMAND})
    }
    assert not any(":permission_request:" in key for key in state)  # the user's hook is not trusted by toka


def test_installing_twice_changes_nothing(codex: Path) -> None:
    (codex / "hooks.json").write_text(json.dumps(MINE))
    integrate("codex")
    files = {name: (codex / name).read_text() for name in ("hooks.json", "config.toml")}
    again = report(integrate("codex"))
    assert again["changed"] is False
    assert (again["hooks"]["events"], again["hooks"]["updated"], again["hooks"]["trusted"]) == ([], [], [])
    assert {name: (codex / name).read_text() for name in files} == files


def test_another_tokas_hooks_are_updated_in_place_with_their_trust(codex: Path) -> None:
    old = "/old/venv/bin/toka hook codex"
    source = f"{codex.resolve()}/hooks.json"
    (codex / "hooks.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo first"}, {"command": old}]}]}})
    )
    stale = trusted_hash("Stop", {"type": "command", "command": old})
    (codex / "config.toml").write_text(
        CODEX_TOML + f'\n[hooks.state."{source}:stop:0:1"]\nenabled = false\ntrusted_hash = "{stale}"\n'
    )
    hooks = report(integrate("codex"))["hooks"]
    assert hooks["updated"] == ["Stop"] and hooks["disabled"] == ["Stop"]
    assert hooks["events"] == [event for event in EVENTS if event != "Stop"]
    assert handlers(codex, "Stop") == [
        [{"type": "command", "command": "echo first"}, {"type": "command", "command": command_of("Stop")}]
    ]
    # The same place, so the same key: its hash follows the new command; the user's choice to turn
    # it off in Codex stays.
    fresh = trusted_hash("Stop", {"type": "command", "command": command_of("Stop")})
    assert states(codex)[f"{source}:stop:0:1"] == {"enabled": False, "trusted_hash": fresh}


def test_uninstall_removes_tokas_hooks_and_trust_and_moves_the_trust_of_the_users_hooks_after_them(
    codex: Path,
) -> None:
    (codex / "hooks.json").write_text(json.dumps(MINE))
    integrate("codex")
    source = f"{codex.resolve()}/hooks.json"
    document = json.loads((codex / "hooks.json").read_text())
    later = {"hooks": [{"type": "command", "command": "echo later"}]}
    document["hooks"]["SessionStart"].append(later)  # the user adds a hook after toka's, and trusts it
    (codex / "hooks.json").write_text(json.dumps(document))
    config = (codex / "config.toml").read_text()
    (codex / "config.toml").write_text(
        config + f'\n[hooks.state."{source}:session_start:2:0"]\ntrusted_hash = "sha256:later"\n'
    )

    gone = report(integrate("codex", "--uninstall"))
    assert gone["hooks"]["events"] == EVENTS and gone["hooks"]["trusted"] == EVENTS and gone["hooks"]["moved"] == 1
    assert json.loads((codex / "hooks.json").read_text()) == {
        "hooks": {
            "SessionStart": [MINE["hooks"]["SessionStart"][0], later],
            "PermissionRequest": MINE["hooks"]["PermissionRequest"],
        }
    }
    assert states(codex) == {f"{source}:session_start:1:0": {"trusted_hash": "sha256:later"}}
    again = report(integrate("codex", "--uninstall"))
    assert again["changed"] is False and again["hooks"]["events"] == []


def test_uninstall_gives_back_the_files_as_they_were(codex: Path) -> None:
    integrate("codex")
    assert (codex / "hooks.json").exists()
    integrate("codex", "--uninstall")
    assert (codex / "config.toml").read_text() == CODEX_TOML
    assert not (codex / "hooks.json").exists()  # toka's hooks were all it held


def test_dry_run_shows_both_files_and_writes_nothing(codex: Path) -> None:
    result = report(integrate("codex", "--dry-run"))
    assert result["dry_run"] is True and result["changed"] is True and result["hooks"]["events"] == EVENTS
    assert f'+            "command": "{COMMAND}"' in result["diff"]
    assert f'+[hooks.state."{codex.resolve()}/hooks.json:session_end:0:0"]' in result["diff"]
    assert not (codex / "hooks.json").exists()
    assert (codex / "config.toml").read_text() == CODEX_TOML


def test_the_table_says_what_was_trusted_and_why(codex: Path) -> None:
    result = CliRunner().invoke(app, ["integrate", "codex"])
    assert result.exit_code == 0, result.output
    assert f"add hooks to {codex}/hooks.json: {', '.join(EVENTS)}: {COMMAND}" in " ".join(result.stdout.split())
    assert "running this is your approval" in " ".join(result.stdout.split())
    again = CliRunner().invoke(app, ["integrate", "codex"])
    assert f"{codex}/hooks.json: toka's hooks in place, trusted" in again.stdout


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"hooks": {', "is not valid JSON"),
        ("[1, 2]", "holds a JSON list, not an object"),
        ('{"hooks": {"Stop": {"hooks": []}}}', "'hooks' is not an object of lists of groups"),
        ('{"hooks": {"Stop": ["echo"]}}', "'hooks' is not an object of lists of groups"),
    ],
)
def test_a_malformed_hooks_file_is_one_line_and_nothing_is_written(codex: Path, text: str, said: str) -> None:
    (codex / "hooks.json").write_text(text)
    result = CliRunner().invoke(app, ["integrate", "codex"])
    assert result.exit_code == 2  # ConfigError
    [error, hint] = result.stderr.splitlines()
    assert error.startswith(f"error: {codex}/hooks.json") and said in error and error.endswith("left untouched")
    assert hint.startswith("hint: ")
    assert (codex / "hooks.json").read_text() == text
    assert (codex / "config.toml").read_text() == CODEX_TOML  # the server and notify neither


def test_no_hooks_leaves_them_out(codex: Path) -> None:
    result = report(integrate("codex", "--no-hooks"))
    assert result["hooks"] is None
    assert not (codex / "hooks.json").exists() and "hooks" not in tomllib.loads((codex / "config.toml").read_text())


def test_a_codex_home_through_a_link_is_keyed_by_where_it_leads(
    codex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex resolves CODEX_HOME before naming hooks.json in its keys (the default ~/.codex it
    takes as it is)."""
    (tmp_path / "link").symlink_to(codex)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "link"))
    integrate("codex")
    assert f"{codex}/hooks.json:stop:0:0" in states(codex)
    monkeypatch.delenv("CODEX_HOME")
    (tmp_path / ".codex").symlink_to(codex)
    integrate("codex", "--uninstall")
    integrate("codex")
    assert f"{tmp_path}/.codex/hooks.json:stop:0:0" in states(codex)


def test_a_hooks_key_of_config_toml_that_is_no_table_is_one_line_and_nothing_is_written(codex: Path) -> None:
    (codex / "config.toml").write_text('hooks = "all"\n' + CODEX_TOML)
    result = CliRunner().invoke(app, ["integrate", "codex"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {codex}/config.toml: 'hooks' is not a table; left untouched",
        "hint: fix the file, then rerun",
    ]
    assert (codex / "config.toml").read_text() == 'hooks = "all"\n' + CODEX_TOML
    assert not (codex / "hooks.json").exists()


def test_no_inbox_runs_the_hook_on_every_event_and_inbox_converts_back_with_the_trust(codex: Path) -> None:
    plain = report(integrate("codex", "--no-inbox"))["hooks"]
    assert plain["inbox"] is False and plain["events"] == EVENTS
    source = f"{codex.resolve()}/hooks.json"
    assert handlers(codex, "PostToolUse") == [[{"type": "command", "command": COMMAND}]]
    back = report(integrate("codex"))["hooks"]
    recording = [event for event in EVENTS if event not in ANSWERING]
    assert back["updated"] == recording and back["trusted"] == recording and back["events"] == []
    for event, label in zip(EVENTS, LABELS, strict=True):
        assert handlers(codex, event) == [[{"type": "command", "command": command_of(event)}]]
        handler = {"type": "command", "command": command_of(event)}
        assert states(codex)[f"{source}:{label}:0:0"] == {"trusted_hash": trusted_hash(event, handler)}
    gone = report(integrate("codex", "--uninstall"))["hooks"]
    assert gone["events"] == EVENTS and not (codex / "hooks.json").exists() and states(codex) == {}
