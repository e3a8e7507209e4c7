"""`toka mcp` driven through the SDK's stdio client against a real daemon: every tool, the
resources and the prompt, bad arguments, a daemon that dies, stdin closed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from daemons import PATIENCE, Spawned, wait_for
from mcp_support import TOKA, mcp_session, text_of

GOLDEN = Path(__file__).parent / "golden" / "tools.json"
TOOLS = ["search", "recall", "memory_get", "memory_set", "memory_list", "note", "context", "handoff", "usage"]


def seed(daemon: Spawned, session: str = "s-mcp", cwd: str = "/nowhere") -> None:
    with daemon.client() as client:
        client.record(session, "session.meta", {"source": "claude-code", "cwd": cwd})
        client.record(session, "message", {"role": "user", "text": "fix the login timeout in auth.py"}, agent="main")
        client.record(session, "message", {"role": "assistant", "text": "The timeout is set in auth.py"}, agent="main")
        client.record(
            session,
            "usage",
            {"model": "claude-sonnet-4-5", "input_tokens": 10, "cache_creation_tokens": 1000, "output_tokens": 50},
            agent="main",
        )


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict)
    assert json.loads(text_of(result)) == result.structured_content  # text and structure agree
    return result.structured_content


def test_the_tool_list_and_schemas_match_the_golden_file(daemon: Spawned) -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with mcp_session() as session:
            listed = await session.list_tools()
            return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]

    tools = anyio.run(scenario)
    assert [tool["name"] for tool in tools] == TOOLS
    assert all(tool["description"] and "\n" not in tool["description"] for tool in tools)  # one line each
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(tools, indent=2) + "\n", encoding="utf-8")
    assert tools == json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_every_tool_answers_from_the_daemon(daemon: Spawned) -> None:
    seed(daemon)

    async def scenario() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        async with mcp_session("--session", "s-mcp") as session:
            out["search"] = structured(await session.call_tool("search", {"query": "timeout", "kinds": ["message"]}))
            out["recall"] = structured(await session.call_tool("recall", {"query": "timeout", "budget": 500}))
            out["set"] = structured(
                await session.call_tool("memory_set", {"scope": "session:s-mcp", "key": "db", "value": {"port": 5432}})
            )
            out["cas"] = structured(
                await session.call_tool(
                    "memory_set", {"scope": "session:s-mcp", "key": "db", "value": 1, "expect_version": 1}
                )
            )
            out["get"] = structured(await session.call_tool("memory_get", {"scope": "session:s-mcp", "key": "db"}))
            out["list"] = structured(await session.call_tool("memory_list", {"scope": "session:s-mcp"}))
            out["note"] = structured(
                await session.call_tool("note", {"kind": "decision", "text": "keep the pool", "reason": "cheaper"})
            )
            out["context"] = structured(await session.call_tool("context", {"budget": 5000}))
            out["created"] = structured(await session.call_tool("handoff", {"action": "create", "reason": "test"}))
            out["shown"] = structured(await session.call_tool("handoff", {}))
            out["usage"] = structured(await session.call_tool("usage", {}))
        return out

    out = anyio.run(scenario)
    assert {hit["session"] for hit in out["search"]["hits"]} == {"s-mcp"}
    assert len(out["search"]["hits"]) == 2
    assert out["recall"]["session"] == "s-mcp" and out["recall"]["tokens"] <= 500
    assert {item["why"] for item in out["recall"]["items"]} >= {"recent"}
    assert (out["set"]["version"], out["cas"]["version"]) == (1, 2)
    assert out["get"]["value"] == 1
    assert [(e["key"], e["version"]) for e in out["list"]["entries"]] == [("db", 2)]
    assert out["note"]["kind"] == "note.decision" and out["note"]["created"] is True
    assert out["context"]["session"] == "s-mcp"
    assert out["created"]["session"] == "s-mcp"
    assert "keep the pool" in out["created"]["markdown"]
    assert out["shown"]["id"] == out["created"]["id"]
    assert out["usage"]["context_tokens"] == 1010
    with daemon.client() as client:
        notes = client.call("events.query", session="s-mcp", kinds=["note.*"])["events"]
    recorded = [(e["kind"], e["payload"]) for e in notes]
    assert recorded == [("note.decision", {"text": "keep the pool", "reason": "cheaper"})]


def test_the_current_session_is_the_latest_recorded_in_the_working_directory(daemon: Spawned, tmp_path: Path) -> None:
    seed(daemon, "here", cwd=str(tmp_path))
    seed(daemon, "elsewhere")  # more recent, another project

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with mcp_session(cwd=tmp_path) as session:
            here = structured(await session.call_tool("usage", {}))
            named = structured(await session.call_tool("usage", {"session": "elsewhere"}))
            return here, named

    here, named = anyio.run(scenario)
    assert (here["session"], named["session"]) == ("here", "elsewhere")


def test_the_context_tool_hands_the_model_redacted_text(daemon: Spawned) -> None:
    seed(daemon)
    with daemon.client() as client:
        client.record("s-mcp", "message", {"role": "user", "text": "the db is postgres://app:hunter2@db/app"})

    async def scenario() -> dict[str, Any]:
        async with mcp_session("--session", "s-mcp") as session:
            return structured(await session.call_tool("context", {"budget": 5000}))

    context = anyio.run(scenario)
    assert context["messages"][-1]["content"] == "the db is postgres://app:[redacted:url_password]@db/app"
    assert context["redaction"]["raw"] is False and context["redaction"]["counts"] == {"url_password": 1}


def test_every_tool_takes_a_session_prefix_and_an_agent(daemon: Spawned) -> None:
    seed(daemon)
    with daemon.client() as client:
        client.record("s-mcp", "message", {"role": "user", "text": "explore auth.py"}, agent="explorer")

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with mcp_session() as session:
            out["usage"] = structured(await session.call_tool("usage", {"session": "s-mc"}))
            out["explorer"] = structured(await session.call_tool("usage", {"session": "s-mc/explorer"}))
            out["context"] = structured(await session.call_tool("context", {"session": "s-mc", "budget": 5000}))
            out["recall"] = structured(await session.call_tool("recall", {"query": "auth.py", "session": "s-mc"}))
            out["search"] = structured(await session.call_tool("search", {"query": "auth.py", "session": "s-mc"}))
            await session.call_tool("note", {"kind": "decision", "text": "keep the pool", "session": "s-mc"})
            out["created"] = structured(await session.call_tool("handoff", {"action": "create", "session": "s-mc"}))
            out["shown"] = structured(await session.call_tool("handoff", {"session": "s-mc"}))
        return out

    out = anyio.run(scenario)
    assert (out["usage"]["session"], out["usage"]["agent"]) == ("s-mcp", "s-mcp/main")
    assert out["explorer"]["agent"] == "s-mcp/explorer"
    assert (out["context"]["session"], out["context"]["agent"]) == ("s-mcp", "s-mcp/main")
    assert out["recall"]["session"] == "s-mcp"
    assert len(out["search"]["hits"]) == 3  # the path searched as written, in the session's three messages
    assert out["created"]["session"] == out["shown"]["session"] == "s-mcp"
    assert out["shown"]["document"]["decisions"][0]["text"] == "keep the pool"
    with daemon.client() as client:
        assert [s["session"] for s in client.call("sessions.list")["sessions"]] == ["s-mcp"]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("search", {}, "query"),  # a required argument left out
        ("search", {"query": "x", "limit": "many"}, "limit"),  # the wrong type
        ("memory_set", {"scope": "global", "key": "k", "value": 1, "expect_version": -1}, "expect_version"),
        ("note", {"kind": "gossip", "text": "x"}, "kind"),  # not one of the kinds
        ("note", {"kind": "todo", "text": "   "}, "argument 'text' is empty"),
        ("search", {"query": '"unclosed', "fts": True}, "error: "),  # the daemon's own error, with its hint
        (
            "search",
            {"query": "x", "since": "soonish"},
            "error: cannot read since 'soonish' as a time\nhint: give an age",
        ),
        ("usage", {"session": "no-such-session"}, "error: "),
        ("memory_get", {"scope": "global", "key": "absent"}, "hint: "),
        ("memory_set", {"scope": "global", "key": "k", "value": 1, "ttl": 1e308}, "less than or equal to 315360000"),
        ("handoff", {"session": "s-mcp"}, "has no handoff yet"),
    ],
)
def test_a_bad_argument_is_an_error_result_and_the_server_carries_on(
    daemon: Spawned, tool: str, arguments: dict[str, Any], message: str
) -> None:
    seed(daemon)

    async def scenario() -> tuple[Any, Any]:
        async with mcp_session() as session:
            bad = await session.call_tool(tool, arguments)
            after = await session.call_tool("memory_list", {})
            return bad, after

    bad, after = anyio.run(scenario)
    assert bad.is_error and message in text_of(bad)
    assert not after.is_error


def test_search_takes_the_times_of_the_cli(daemon: Spawned) -> None:
    seed(daemon)

    async def scenario() -> list[int]:
        async with mcp_session() as session:
            counts = []
            for window in ({"since": "yesterday"}, {"since": "1h"}, {"until": "3 days ago"}, {"since": "2099-01-01"}):
                found = structured(await session.call_tool("search", {"query": "timeout", **window}))
                counts.append(len(found["hits"]))
            return counts

    assert anyio.run(scenario) == [2, 2, 0, 0]


def test_search_by_meaning_finds_a_decision_without_its_words(daemon: Spawned) -> None:
    seed(daemon)
    with daemon.client() as client:
        client.note("s-mcp", "decision", "persist the job queue in Redis streams rather than RabbitMQ")
        wait_for(lambda: client.call("recall.status")["embedded"] == 1, "the note is embedded")

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with mcp_session() as session:
            question = "which message broker did we settle on"
            by_meaning = structured(await session.call_tool("search", {"query": question, "semantic": True}))
            by_words = structured(await session.call_tool("search", {"query": question, "fts": True}))
            return by_meaning, by_words

    by_meaning, by_words = anyio.run(scenario)
    assert [(hit["kind"], hit["matched"]) for hit in by_meaning["hits"]] == [("note.decision", "meaning")]
    assert by_words["hits"] == []


def test_a_daemon_that_dies_gives_an_error_then_the_next_call_recovers(daemon: Spawned) -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        async with mcp_session() as session:
            first = await session.call_tool("memory_set", {"scope": "global", "key": "k", "value": "kept"})
            daemon.stop(signal.SIGKILL)  # the server's connection is now to a dead daemon
            lost = await session.call_tool("memory_get", {"scope": "global", "key": "k"})
            again = await session.call_tool("memory_get", {"scope": "global", "key": "k"})  # autostarts a daemon
            return first, lost, again

    first, lost, again = anyio.run(scenario)
    assert not first.is_error
    assert lost.is_error and "daemon" in text_of(lost)
    assert structured(again)["value"] == "kept"


def test_resources_and_the_prompt(daemon: Spawned) -> None:
    seed(daemon)

    async def scenario() -> dict[str, Any]:
        async with mcp_session("--session", "s-mcp") as session:
            created = structured(await session.call_tool("handoff", {"action": "create"}))
            await session.call_tool("memory_set", {"scope": "global", "key": "editor", "value": "vim"})
            templates = await session.list_resource_templates()
            prompts = await session.list_prompts()
            transcript = await session.read_resource("toka://session/s-mcp")
            handoff = await session.read_resource(f"toka://handoff/{created['id']}")
            memory = await session.read_resource("toka://memory/global")
            prompt = await session.get_prompt("continue-from-handoff", {})
            return {
                "created": created,
                "templates": sorted(t.uri_template for t in templates.resource_templates),
                "prompts": [p.name for p in prompts.prompts],
                "transcript": transcript.contents[0].text,
                "handoff": handoff.contents[0].text,
                "memory": json.loads(memory.contents[0].text),
                "prompt": prompt.messages[0].content.text,
            }

    out = anyio.run(scenario)
    assert out["templates"] == ["toka://handoff/{handoff_id}", "toka://memory/{scope}", "toka://session/{session_id}"]
    assert out["prompts"] == ["continue-from-handoff"]
    assert out["transcript"].startswith("# Session s-mcp\n")
    assert "fix the login timeout in auth.py" in out["transcript"]
    assert out["handoff"] == out["created"]["markdown"]
    assert [(e["key"], e["value"]) for e in out["memory"]["entries"]] == [("editor", "vim")]
    assert out["prompt"] == out["created"]["prompt"]


def test_a_resource_that_does_not_exist_is_an_error_not_a_dead_server(daemon: Spawned) -> None:
    async def scenario() -> tuple[str, Any]:
        async with mcp_session() as session:
            try:
                await session.read_resource("toka://handoff/ffffffff")
            except Exception as exc:  # the SDK raises the protocol error the server answered
                failure = str(exc)
            else:
                failure = ""
            return failure, await session.call_tool("memory_list", {})

    failure, after = anyio.run(scenario)
    assert "ffffffff" in failure
    assert not after.is_error


def test_the_server_exits_cleanly_when_stdin_closes(daemon: Spawned) -> None:
    process = subprocess.Popen([TOKA, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    process.stdin.write(json.dumps(initialize).encode() + b"\n")
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    process.stdin.close()
    assert process.wait(PATIENCE) == 0
    assert answer["result"]["serverInfo"]["name"] == "toka"
    assert process.stderr is not None and b"Traceback" not in process.stderr.read()


def test_without_the_sdk_the_command_names_the_package_to_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['mcp'] = None  # as if the SDK were not installed\n"
        "sys.argv = ['toka', 'mcp']\n"
        "from toka_cli.main import main\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: `toka mcp` needs the MCP SDK (the mcp package), which is not installed",
        "hint: pip install 'mcp>=2.3,<3' (toka depends on it; reinstalling toka brings it back too)",
    ]


def test_the_ttl_bound_of_the_schema_is_the_daemons() -> None:
    from daemon.memory.service import MAX_TTL_S
    from toka_cli.mcp import tools

    assert tools.MAX_TTL_S == MAX_TTL_S


def test_a_note_without_a_session_after_a_memory_write_lands_in_the_agents_session(
    daemon: Spawned, tmp_path: Path
) -> None:
    seed(daemon, "agent-1")  # recorded in another folder than the server's

    async def scenario() -> dict[str, Any]:
        async with mcp_session(cwd=tmp_path) as session:
            structured(await session.call_tool("memory_set", {"scope": "global", "key": "port", "value": 8421}))
            return structured(await session.call_tool("note", {"kind": "decision", "text": "serve on 8421"}))

    note = anyio.run(scenario)
    assert (note["session"], note["kind"]) == ("agent-1", "note.decision")
    with daemon.client() as client:
        assert client.call("events.query", session="toka.memory", kinds=["note.*"])["events"] == []
        handoff = client.call("handoffs.create", target="agent-1")
    assert "serve on 8421" in handoff["markdown"]


def test_with_no_agent_session_a_tool_asks_for_the_session_argument(daemon: Spawned, tmp_path: Path) -> None:
    async def scenario() -> tuple[str, str]:
        async with mcp_session(cwd=tmp_path) as session:
            structured(await session.call_tool("memory_set", {"scope": "global", "key": "port", "value": 8421}))
            refused = await session.call_tool("note", {"kind": "decision", "text": "serve on 8421"})
            assert refused.is_error
            named = structured(await session.call_tool("memory_get", {"scope": "global", "key": "port"}))
            return text_of(refused), str(named["value"])

    refused, value = anyio.run(scenario)
    error, hint = refused.splitlines()  # the SDK puts "Error executing tool note: " before toka's lines
    assert error.endswith("error: no agent session recorded yet: toka's own sessions (toka.*) take no notes")
    assert hint.startswith("hint: pass the `session` argument")
    assert value == "8421"  # the server carries on


def test_a_mebibyte_search_query_is_an_error_result_and_the_server_carries_on(daemon: Spawned) -> None:
    seed(daemon)

    async def scenario() -> tuple[Any, dict[str, Any]]:
        async with mcp_session() as session:
            refused = await session.call_tool("search", {"query": "timeout " * (1024 * 1024 // 8)})
            found = structured(await session.call_tool("search", {"query": "timeout"}))
            return refused, found

    refused, found = anyio.run(scenario)
    assert refused.is_error and "characters long; at most 4,096 are read" in text_of(refused)
    assert len(found["hits"]) == 2
