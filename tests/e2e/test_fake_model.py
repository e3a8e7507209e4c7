"""The fake model itself, over HTTP with the standard library: what the agents get from it is what
the end-to-end tests count on (it needs no node, so it runs everywhere)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from fake_model import FakeModel, Reply, Text, ToolCall, Usage

USAGE = Usage(input=120, output=25, cache_creation=3000, cache_read=400, cache_creation_1h=1000)
TOOLS = [{"name": "Read", "input_schema": {"type": "object"}}]


def post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.headers["Content-Type"], answer.read()


def events(stream: bytes) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for chunk in stream.decode().split("\n\n"):
        if chunk.strip():
            name, data = chunk.split("\n")
            found.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return found


def test_a_streamed_anthropic_reply_carries_the_tool_call_and_the_usage() -> None:
    call = ToolCall("Read", {"file_path": "/notes.txt"})
    with FakeModel() as model:
        model.script(Reply((Text("Reading."), call), USAGE))
        kind, body = post(model.url + "/v1/messages?beta=true", {"stream": True, "tools": TOOLS, "messages": []})
    assert kind == "text/event-stream"
    stream = events(body)
    assert [name for name, _ in stream] == [
        "message_start",
        *["content_block_start", "content_block_delta", "content_block_stop"] * 2,
        "message_delta",
        "message_stop",
    ]
    start_usage = stream[0][1]["message"]["usage"]
    assert (start_usage["input_tokens"], start_usage["cache_creation_input_tokens"]) == (120, 3000)
    assert start_usage["cache_creation"] == {"ephemeral_5m_input_tokens": 2000, "ephemeral_1h_input_tokens": 1000}
    assert stream[4][1]["content_block"] == {"type": "tool_use", "id": call.tool_use_id, "name": "Read", "input": {}}
    assert json.loads(stream[5][1]["delta"]["partial_json"]) == {"file_path": "/notes.txt"}
    assert stream[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert stream[-2][1]["usage"] == {"output_tokens": 25}
    assert [r.path for r in model.agent_turns()] == ["/v1/messages"]


def test_a_side_call_gets_text_with_no_usage_and_an_unscripted_turn_is_kept() -> None:
    with FakeModel() as model:
        _, side = post(model.url + "/v1/messages", {"messages": []})
        _, turn = post(model.url + "/v1/messages", {"tools": TOOLS, "messages": []})
        _, counted = post(model.url + "/v1/messages/count_tokens", {"messages": []})
    message = json.loads(side)
    assert (message["stop_reason"], message["usage"]["input_tokens"], message["usage"]["output_tokens"]) == (
        "end_turn",
        0,
        0,
    )
    assert json.loads(turn)["content"][0]["text"] == "no reply was scripted for this turn"
    assert json.loads(counted) == {"input_tokens": 100}
    assert len(model.unscripted) == 1 and len(model.requests) == 3


def test_an_openai_reply_calls_a_namespaced_function_with_the_usage() -> None:
    call = ToolCall("memory_set", {"key": "k"}, namespace="mcp__toka")
    tools = [{"type": "namespace", "name": "mcp__toka", "tools": [{"type": "function", "name": "memory_set"}]}]
    with FakeModel() as model:
        model.script(Reply((call,), Usage(input=1000, output=50, cache_read=600, reasoning=20)), api="openai")
        _, body = post(model.url + "/v1/responses", {"tools": tools, "input": []})
    stream = events(body)
    assert [name for name, _ in stream] == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    item = stream[2][1]["item"]
    assert (item["type"], item["namespace"], item["name"], item["call_id"]) == (
        "function_call",
        "mcp__toka",
        "memory_set",
        call.call_id,
    )
    assert stream[-1][1]["response"]["usage"] == {
        "input_tokens": 1000,
        "input_tokens_details": {"cached_tokens": 600},
        "output_tokens": 50,
        "output_tokens_details": {"reasoning_tokens": 20},
        "total_tokens": 1050,
    }
    assert model.agent_turns()[0].tool_names == ["mcp__toka/memory_set"]
