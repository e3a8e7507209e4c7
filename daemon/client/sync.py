"""The synchronous client: the standard library's socket and json, nothing heavier.

The CLI imports this on every call, so it must stay cheap to import: no asyncio, no
aiosqlite, no blake3. It checks the daemon's protocol version when it connects, starts the
daemon when none is running (see :mod:`daemon.client.autostart`), and raises the daemon's errors as the
same :class:`~store.errors.TokaError` subclasses the daemon raised.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Iterator

from daemon.client.socket import Connection, DaemonNotRunning, connect_socket
from daemon.paths import Paths, resolve_paths
from daemon.protocol import decode, request, result_of
from daemon.version import PROTOCOL_VERSION, VERSION
from store.errors import DaemonUnavailable, ProtocolError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (about 4 ms) on every call
if TYPE_CHECKING:
    from typing import Any, Literal, NamedTuple

    from daemon.contract.results import Event

ProgressFn = Callable[[int, int], None]
# The line limit of a daemon whose hello does not say it: the default of daemon.max_line_bytes.
DEFAULT_LINE_BYTES = 4 * 1024 * 1024


class Client:
    """One connection to the daemon. Use as a context manager, or call :meth:`close`."""

    def __init__(self, paths: Paths | None = None, *, autostart: bool = True, timeout: float | None = 60.0) -> None:
        self.paths = paths or resolve_paths()
        self._timeout = timeout
        try:
            self._connection = Connection(self.paths.socket, timeout)
        except DaemonNotRunning:
            if not autostart:
                raise
            from daemon.client.autostart import start_daemon

            start_daemon(self.paths)
            self._connection = Connection(self.paths.socket, timeout)
        self.server = self.call("hello")
        if self.server.get("protocol") != PROTOCOL_VERSION:
            self.close()
            raise ProtocolError(
                f"the daemon speaks protocol {self.server.get('protocol')}, this toka speaks"
                f" {PROTOCOL_VERSION} (daemon {self.server.get('version')}, client {VERSION})",
                "run `toka daemon restart`",
            )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    def call(self, op: str, progress: ProgressFn | None = None, **args: Any) -> Any:
        """Send one request and return its result; progress lines go to ``progress``."""
        if progress is not None:
            args["progress"] = True
        return self.result(self._connection.send(op, args), progress)

    def submit(self, op: str, **args: Any) -> int:
        """Send a request without waiting: its answer is read with :meth:`result`. Answers come
        in request order, so a caller may keep one request in flight while it prepares the next."""
        return self._connection.send(op, args)

    def submit_encoded(self, op: str, name: str, items: list[bytes]) -> int:
        """As :meth:`submit`, for a request whose one argument ``name`` is a list of JSON values
        encoded already (daemon/client/appends.py)."""
        return self._connection.send_encoded(op, name, items)

    @property
    def line_bytes(self) -> int:
        """The longest request line the daemon accepts (its ``daemon.max_line_bytes``)."""
        limit = self.server.get("max_line_bytes")
        return limit if isinstance(limit, int) and limit > 0 else DEFAULT_LINE_BYTES

    def result(self, request_id: int, progress: ProgressFn | None = None) -> Any:
        """The result of a request sent earlier (answers to requests before it are skipped)."""
        while True:
            message = self._connection.receive()
            if message.get("id") != request_id and message.get("id") is not None:
                continue  # a late line of an earlier stream
            if "progress" in message:
                if progress is not None:
                    progress(message["progress"]["done"], message["progress"]["total"])
                continue
            return result_of(message)

    def _stream(self, op: str, args: dict[str, Any], timeout: float | None) -> Iterator[dict[str, Any]]:
        """Every message of a streaming request, on a connection of its own: this client stays
        usable for calls meanwhile, and a caller that stops reading simply hangs up."""
        sock = connect_socket(self.paths.socket, timeout)
        try:
            with sock.makefile("rb") as reader:
                sock.sendall(request(1, op, args))
                for line in reader:
                    yield decode(line)
            raise DaemonUnavailable("the daemon closed the stream", "see `toka daemon logs`")
        except TimeoutError:
            raise DaemonUnavailable("the daemon did not answer in time", "see `toka daemon logs`") from None
        finally:
            sock.close()

    def stream(self, op: str, **args: Any) -> Iterator[dict[str, Any]]:
        """The lines of a streaming op (after its first answer), until it ends or the caller stops."""
        messages = self._stream(op, args, None)
        result_of(next(messages))
        for message in messages:
            if "ok" in message:
                result_of(message)
                return
            yield message

    def subscribe(self, **args: Any) -> Iterator[Event]:
        """Events as they commit (with ``after_seq``, first those after it), until closed."""
        messages = self._stream("events.subscribe", args, None)
        result_of(next(messages))
        for message in messages:
            if "event" not in message:
                result_of(message)  # the daemon ended the stream: raise why
                return
            yield message["event"]

    def iter_events(self, **query: Any) -> Iterator[Event]:
        """Every event matching ``query`` (events.query args; ``limit`` caps the total)."""
        for message in self._stream("events.stream", query, self._timeout):
            if "ok" in message:
                result_of(message)
                return
            yield from message["events"]

    # Typed helpers for the common calls.

    def append(self, events: list[dict[str, Any]], session: str | None = None) -> list[dict[str, Any]]:
        args: dict[str, Any] = {"events": events}
        if session is not None:
            args["session"] = session
        result: list[dict[str, Any]] = self.call("events.append", **args)["events"]
        return result

    def record(self, session: str, kind: str, payload: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """Append one event; ``fields`` may set agent, ts, key or parents."""
        return self.append([{"session": session, "kind": kind, "payload": payload, **fields}])[0]

    def note(
        self, target: str, kind: str, text: str, reason: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        """A note (decision, rejected, assumption, constraint, dependency, todo, error) that the
        next handoff document of the agent ``target`` names lists (a session: its main agent;
        ``agent``: an agent of the target's session, by name)."""
        args: dict[str, Any] = {"target": target, "kind": kind, "text": text, "reason": reason, "agent": agent}
        noted: dict[str, Any] = self.call("notes.add", **{k: v for k, v in args.items() if v is not None})
        return noted

    def report_usage(self, agent: str, input_tokens: int = 0, output_tokens: int = 0, **counts: Any) -> dict[str, Any]:
        """Report one call's usage for an agent (cache_read_tokens, cache_creation_tokens, model
        may be given too); the agent as it stands after its lifecycle took the usage in."""
        result: dict[str, Any] = self.call(
            "agents.usage", agent=agent, input_tokens=input_tokens, output_tokens=output_tokens, **counts
        )
        return result


if TYPE_CHECKING:

    class Probe(NamedTuple):
        state: Literal["running", "needs_restart", "unreachable"]
        detail: str
        server: dict[str, Any] | None = None

else:  # the same record for type checkers and at run time, without typing (see the imports)
    Probe = namedtuple("Probe", ["state", "detail", "server"], defaults=[None])


def probe(paths: Paths | None = None, timeout: float = 2.0) -> Probe:
    """Is a daemon answering, and is it of this toka? Never starts one."""
    paths = paths or resolve_paths()
    try:
        sock = connect_socket(paths.socket, timeout)
    except DaemonUnavailable as exc:
        return Probe("unreachable", exc.message)
    try:
        with sock, sock.makefile("rb") as reader:
            sock.sendall(request(1, "hello", {}))
            server = result_of(decode(reader.readline() or b"null"))
    except (OSError, ProtocolError) as exc:
        return Probe("unreachable", f"the socket answers but not as a toka daemon ({exc})")
    if server.get("protocol") != PROTOCOL_VERSION or server.get("version") != VERSION:
        return Probe(
            "needs_restart",
            f"the daemon runs toka {server.get('version')} (protocol {server.get('protocol')}),"
            f" this is {VERSION} (protocol {PROTOCOL_VERSION}): run `toka daemon restart`",
            server,
        )
    return Probe("running", f"toka {VERSION}, pid {server.get('pid')}", server)
