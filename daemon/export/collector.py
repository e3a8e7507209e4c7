"""Posting spans to a collector over OTLP/HTTP, and trying again while it cannot take them.

A request is one ``ExportTraceServiceRequest`` in protobuf (daemon/export/encode.py), posted
with aiohttp on the daemon's own event loop: no thread, and the daemon's other work goes on
while a collector is slow. What an answer means (the OTLP/HTTP specification's rules, with one
choice of toka's):

- 2xx: taken; a ``partial_success`` says how many spans the collector rejected, which are
  counted as dropped;
- 400: the collector will never take this request: its spans are dropped (and counted);
- 413: too large: the batch is split in two and each half sent, down to one span;
- anything else (429, 5xx, and also 401, 403 and 404, which a fixed token or URL cures), and no
  answer at all: tried again after a wait that doubles from ``FIRST_WAIT_S`` up to a ceiling,
  or for as long as the collector's ``Retry-After`` asks. Nothing is dropped for a collector
  that is down or misconfigured: the forwarder waits, the export gives up and says why.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from daemon.export.encode import encode_spans, rejected_spans
from daemon.export.spans import Span

if TYPE_CHECKING:
    import aiohttp

FIRST_WAIT_S = 0.2
CONTENT_TYPE = "application/x-protobuf"
# Characters of a refusal's body quoted in an error.
QUOTED = 200
# Bytes of an answer read: a partial success, or the start of a refusal's text, takes far fewer.
# The rest of a longer one is not read: the connection is dropped instead, so a collector (or
# whatever answers at its address) cannot make the daemon hold an answer of any size.
ANSWER_BYTES = 64 * 1024


class Unsent(Exception):
    """The collector did not take a request: ``retry`` says whether trying again may help."""

    def __init__(self, message: str, retry: bool, status: int | None = None, wait_s: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry = retry
        self.status = status
        self.wait_s = wait_s  # what the collector's Retry-After asked for


@dataclass(slots=True)
class Delivered:
    spans: int = 0  # taken by the collector
    dropped: int = 0  # refused for good (400, a single span too large) or rejected in a partial success
    requests: int = 0
    bytes: int = 0
    retries: int = 0

    def add(self, other: Delivered) -> None:
        self.spans += other.spans
        self.dropped += other.dropped
        self.requests += other.requests
        self.bytes += other.bytes
        self.retries += other.retries


class Collector:
    def __init__(self, url: str, headers: dict[str, str], timeout_s: float) -> None:
        self.url = url
        self.headers = {**headers, "Content-Type": CONTENT_TYPE}
        self.timeout_s = timeout_s
        self._session: aiohttp.ClientSession | None = None

    async def post(self, body: bytes) -> tuple[int, str]:
        """Post one request; the spans it rejected and why, or Unsent."""
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        try:
            async with self._session.post(self.url, data=body, headers=self.headers) as answer:
                content = await _start_of(answer)
                if 200 <= answer.status < 300:
                    return rejected_spans(content)
                raise Unsent(
                    f"{self.url} answered {answer.status}{_quoted(content, answer.content_type)}",
                    retry=answer.status not in (400, 413),
                    status=answer.status,
                    wait_s=_retry_after(answer.headers.get("Retry-After")),
                )
        except TimeoutError:  # aiohttp's own timeouts among them; before OSError, which it is one of
            raise Unsent(
                f"the collector at {self.url} did not answer within {self.timeout_s:g} s", retry=True
            ) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise Unsent(f"cannot reach {self.url}: {_reason(exc)}", retry=True) from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


async def _start_of(answer: aiohttp.ClientResponse) -> bytes:
    """The answer's body up to ANSWER_BYTES; past them the connection is closed, unread."""
    parts: list[bytes] = []
    size = 0
    while size < ANSWER_BYTES and (chunk := await answer.content.read(ANSWER_BYTES - size)):
        parts.append(chunk)
        size += len(chunk)
    if not answer.content.at_eof():
        answer.close()  # not released to the pool: what is left of the answer is never read
    return b"".join(parts)


def _reason(exc: BaseException) -> str:
    cause = getattr(exc, "os_error", None) or exc.__cause__ or exc  # aiohttp keeps the OSError apart
    if isinstance(cause, OSError) and cause.errno:
        return os.strerror(cause.errno)  # "Connection refused", not asyncio's "Connect call failed (...)"
    return str(cause) or type(cause).__name__


def _quoted(content: bytes, content_type: str) -> str:
    if "json" not in content_type and not content_type.startswith("text/"):
        return ""
    text = " ".join(content.decode(errors="replace").split())[:QUOTED]
    return f": {text}" if text else ""


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the usual doubling wait applies


Wait = Callable[[float], Awaitable[bool]]  # sleeps; False when the caller stops waiting (shutdown)
Retrying = Callable[[Unsent, float], None]  # told of each failure and the wait before the next try


async def sleep(seconds: float) -> bool:
    await asyncio.sleep(seconds)
    return True


async def deliver(
    collector: Collector,
    spans: Sequence[Span],
    *,
    max_wait_s: float,
    tries: int | None = None,
    wait: Wait = sleep,
    retrying: Retrying | None = None,
) -> Delivered:
    """Send ``spans`` in one request (halves of it, when too large), trying again after each
    failure that may pass: up to ``tries`` times, or until ``wait`` says to stop (the spans are
    then not all sent: Unsent is raised). Unsent too after ``tries`` failures."""
    done = Delivered()
    body = encode_spans(spans)
    delay = FIRST_WAIT_S
    failures = 0
    while True:
        try:
            rejected, _ = await collector.post(body)
        except Unsent as unsent:
            if unsent.status == 413 and len(spans) > 1:
                half = len(spans) // 2
                for part in (spans[:half], spans[half:]):
                    done.add(
                        await deliver(collector, part, max_wait_s=max_wait_s, tries=tries, wait=wait, retrying=retrying)
                    )
                return done
            if not unsent.retry:
                done.dropped += len(spans)
                return done
            failures += 1
            if tries is not None and failures >= tries:
                raise
            pause = min(max_wait_s, unsent.wait_s if unsent.wait_s is not None else delay * random.uniform(0.8, 1.2))
            if retrying is not None:
                retrying(unsent, pause)
            done.retries += 1
            if not await wait(pause):
                raise
            delay = min(max_wait_s, delay * 2)
            continue
        done.requests += 1
        done.bytes += len(body)
        done.dropped += min(rejected, len(spans))
        done.spans += len(spans) - min(rejected, len(spans))
        return done
