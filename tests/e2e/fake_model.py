"""A model server on loopback for the real Claude Code and Codex CLIs, answering from a script.

It speaks the two APIs the agents call: Anthropic's ``POST /v1/messages`` (an SSE stream when the
request says ``stream: true``, one JSON document otherwise) with ``/v1/messages/count_tokens``,
and OpenAI's ``POST /v1/responses`` (SSE). A test scripts the agent's turns as ``Reply`` values,
each a list of blocks (text, or a call of a tool by name) and the usage the reply reports, so
every figure toka later shows of the session is known to the token.

A request offering tools is an agent turn and takes the next reply of its API's script; a
request offering none is one of the client's side calls (a title, a summary) and gets a short
text with zero usage, so it adds nothing to what the test counts. ``latency_s`` makes each agent
turn's reply wait that long first, as a real model's does (benchmarks/bench_hooks_claude.py). Every request is kept
(``requests``), in order, for the test to read what was offered and what came back.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-sonnet-4-5"
# What an unscripted agent turn is told (and what a test finds in ``unscripted``).
UNSCRIPTED = "no reply was scripted for this turn"
NOT_FOUND = b'{"error": {"type": "not_found_error", "message": "no such path"}}'


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolCall:
    """A call of tool ``name`` with ``arguments``; for Codex, ``namespace`` names the MCP server's
    namespace tool (``mcp__toka``) the function belongs to."""

    name: str
    arguments: dict[str, Any]
    namespace: str | None = None
    call_id: str = field(default_factory=lambda: "call_" + uuid.uuid4().hex[:24])

    @property
    def tool_use_id(self) -> str:
        """The id of the call as Anthropic's ``tool_use`` block (OpenAI's is ``call_id``)."""
        return "toolu_" + self.call_id.removeprefix("call_")


@dataclass(frozen=True)
class Usage:
    """Anthropic's four counts (``input`` is the uncached part; ``cache_creation_1h`` is the part
    of ``cache_creation`` kept for an hour); for OpenAI, ``input`` is the whole prompt (cached
    included, ``cache_read`` of it cached) and ``reasoning`` is part of ``output``."""

    input: int
    output: int
    cache_creation: int = 0
    cache_read: int = 0
    cache_creation_1h: int = 0
    reasoning: int = 0


@dataclass(frozen=True)
class Reply:
    blocks: tuple[Text | ToolCall, ...]
    usage: Usage

    @property
    def calls_tool(self) -> bool:
        return any(isinstance(block, ToolCall) for block in self.blocks)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: dict[str, Any]

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered; a namespace's functions as ``namespace/function``."""
        names = []
        for tool in self.body.get("tools") or []:
            if tool.get("type") == "namespace":
                names += [f"{tool['name']}/{inner.get('name')}" for inner in tool.get("tools") or []]
            elif "name" in tool:
                names.append(tool["name"])
        return names

    @property
    def is_agent_turn(self) -> bool:
        return bool(self.body.get("tools"))


class FakeModel:
    """The server; ``with FakeModel() as model:`` runs it in a thread on 127.0.0.1."""

    def __init__(self, latency_s: float = 0.0) -> None:
        # How long an agent turn's reply waits before it starts, as a real model's would.
        self.latency_s = latency_s
        # The replies still to give, per API.
        self.scripts: dict[str, list[Reply]] = {"anthropic": [], "openai": []}
        self.requests: list[Request] = []
        self.unscripted: list[Request] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-model", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def script(self, *replies: Reply, api: str = "anthropic") -> None:
        """Queue the agent's next turns on ``api`` (``anthropic`` or ``openai``)."""
        with self._lock:
            self.scripts[api].extend(replies)

    def agent_turns(self, path: str | None = None) -> list[Request]:
        """The requests that offered tools (on ``path``, when given), in order."""
        with self._lock:
            return [r for r in self.requests if r.is_agent_turn and (path is None or r.path == path)]

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def next_reply(self, request: Request, api: str) -> Reply:
        """Record ``request`` and take its reply from ``api``'s script."""
        with self._lock:
            self.requests.append(request)
            if not request.is_agent_turn:
                return Reply((Text("Side note"),), Usage(0, 0))
            queue = self.scripts[api]
            if queue:
                reply = queue.pop(0)
            else:
                self.unscripted.append(request)
                reply = Reply((Text(UNSCRIPTED),), Usage(0, 0))
        if self.latency_s:
            time.sleep(self.latency_s)
        return reply


def _handler_for(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reads ``requests``
            pass

        def do_GET(self) -> None:
            model.record(Request("GET", self.path, {}))
            self._send(404, "application/json", NOT_FOUND)

        def do_HEAD(self) -> None:
            self._send(200, "text/plain", b"")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {"unparsed": raw.decode(errors="replace")}
            path = self.path.split("?", 1)[0]
            request = Request("POST", path, body)
            if path.endswith("/messages/count_tokens"):
                model.record(request)
                self._send(200, "application/json", json.dumps({"input_tokens": 100}).encode())
            elif path.endswith("/messages"):
                reply = model.next_reply(request, "anthropic")
                if body.get("stream"):
                    self._send(200, "text/event-stream", _sse(anthropic_stream(reply, body)))
                else:
                    self._send(200, "application/json", json.dumps(anthropic_message(reply, body)).encode())
            elif path.endswith("/responses"):
                reply = model.next_reply(request, "openai")
                self._send(200, "text/event-stream", _sse(openai_stream(reply, body)))
            else:
                model.record(request)
                self._send(404, "application/json", NOT_FOUND)

        def _send(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            # As the real APIs do: the id the agents record in their transcripts and telemetry.
            request_id = f"req_{uuid.uuid4().hex[:24]}"
            self.send_header("request-id", request_id)
            self.send_header("x-request-id", request_id)
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def _sse(events: Iterator[dict[str, Any]]) -> bytes:
    """Server-sent events, each named by its ``type``."""
    return b"".join(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode() for data in events)


# Anthropic Messages


def _anthropic_usage(usage: Usage, output: int) -> dict[str, Any]:
    return {
        "input_tokens": usage.input,
        "cache_creation_input_tokens": usage.cache_creation,
        "cache_read_input_tokens": usage.cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage.cache_creation - usage.cache_creation_1h,
            "ephemeral_1h_input_tokens": usage.cache_creation_1h,
        },
        "output_tokens": output,
    }


def _anthropic_block(block: Text | ToolCall) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    return {"type": "tool_use", "id": block.tool_use_id, "name": block.name, "input": block.arguments}


def anthropic_message(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": request.get("model") or MODEL,
        "content": [_anthropic_block(block) for block in reply.blocks],
        "stop_reason": "tool_use" if reply.calls_tool else "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(reply.usage, reply.usage.output),
    }


def anthropic_stream(reply: Reply, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The events of a streamed message: the usage's input counts come first, the output last."""
    message = anthropic_message(reply, request)
    start = {**message, "content": [], "stop_reason": None, "usage": _anthropic_usage(reply.usage, 1)}
    yield {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opened, delta = {**block, "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opened, delta = (
                {**block, "input": {}},
                {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            )
        yield {"type": "content_block_start", "index": index, "content_block": opened}
        yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield {"type": "message_delta", "delta": stop, "usage": {"output_tokens": reply.usage.output}}
    yield {"type": "message_stop"}


# OpenAI Responses


def _openai_item(block: Text | ToolCall) -> dict[str, Any]:
    if isinstance(block, Text):
        return {
            "type": "message",
            "id": "msg_" + uuid.uuid4().hex[:24],
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": block.text, "annotations": []}],
        }
    item = {
        "type": "function_call",
        "id": "fc_" + uuid.uuid4().hex[:24],
        "call_id": block.call_id,
        "name": block.name,
        "arguments": json.dumps(block.arguments),
        "status": "completed",
    }
    if block.namespace is not None:
        item["namespace"] = block.namespace
    return item


def openai_stream(reply: Reply, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    response = {"id": "resp_" + uuid.uuid4().hex[:24], "object": "response", "model": request.get("model") or "gpt-5"}
    yield {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}}
    items = [_openai_item(block) for block in reply.blocks]
    for index, item in enumerate(items):
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    usage = {
        "input_tokens": reply.usage.input,
        "input_tokens_details": {"cached_tokens": reply.usage.cache_read},
        "output_tokens": reply.usage.output,
        "output_tokens_details": {"reasoning_tokens": reply.usage.reasoning},
        "total_tokens": reply.usage.input + reply.usage.output,
    }
    yield {
        "type": "response.completed",
        "response": {**response, "status": "completed", "output": items, "usage": usage},
    }
