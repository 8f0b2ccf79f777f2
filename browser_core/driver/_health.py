"""Chrome's health, remembered between calls, and the HTTP probe that watches for its return.

Guards against paying a connect timeout on every call while the broadcast Chrome is down: the
driver marks Chrome `down` after a failed connect, later calls fail at once, and a background
task probes `GET /json/version` (1 s timeout, every second) until Chrome answers again. A Chrome
that accepts connections but never answers (a stuck socket, a SIGSTOPped Chrome) is found by
the probe's timeout. The probe uses asyncio streams, so it is cancellable and holds no thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import structlog

HealthState = Literal["up", "down", "unknown"]
PROBE_TIMEOUT_S = 1.0  # a Chrome slower than this to answer /json/version counts as hung
PROBE_INTERVAL_S = 1.0  # between background probes while Chrome is down
RECHECK_TIMEOUT_S = 0.25  # a call's own re-check while down (only after a quick failure)
_MAX_RESPONSE = 64 * 1024
log = structlog.get_logger("browser_core.health")


@dataclass(frozen=True)
class ProbeResult:
    """One `GET /json/version`: did Chrome answer, and if not, did it refuse or hang."""

    ok: bool
    elapsed_ms: int
    error: str | None = None
    hung: bool = False  # no answer within the timeout (as opposed to refused at once)


@dataclass(frozen=True)
class ChromeHealth:
    """What the driver knows about the broadcast Chrome (a snapshot; safe to read anywhere).

    `state`: "up" (connected, or the probe saw it answer), "down" (a connect failed; calls
    fail at once until the probe sees it again), "unknown" (not tried yet, or the connection
    was lost and the next call will find out). `since`: Unix time of the last change of
    state. `reconnects`: successful connects after the first. `connect_failures`: connects
    that failed (each one marks Chrome down). `hung`: the last failure was a timeout.
    """

    state: HealthState = "unknown"
    endpoint: str = ""
    since: float = 0.0
    last_error: str | None = None
    reconnects: int = 0
    connect_failures: int = 0
    hung: bool = False
    connected: bool = False
    probing: bool = False

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields for `/v1/status`, `/readyz` and `/metrics`."""
        return asdict(self)


class HealthMonitor:
    """Keeps the `ChromeHealth` of one endpoint and runs the background probe while it is down.

    Lives on the driver's event loop: its methods are called from there; `snapshot()` may be
    read from any thread.
    """

    def __init__(self, endpoint: Callable[[], str]) -> None:
        self._endpoint = endpoint
        self._health = ChromeHealth(endpoint=endpoint(), since=time.time())
        self._ever_connected = False
        self._task: asyncio.Task[None] | None = None

    def snapshot(self, *, connected: bool = False) -> ChromeHealth:
        probing = self._task is not None and not self._task.done()
        return replace(self._health, connected=connected, probing=probing)

    @property
    def down(self) -> bool:
        return self._health.state == "down"

    # -- what the driver reports ---------------------------------------------------------

    def connected(self) -> None:
        """A connect succeeded (the first one, or a reconnect)."""
        reconnects = self._health.reconnects + (1 if self._ever_connected else 0)
        self._ever_connected = True
        self._set("up", reconnects=reconnects, hung=False)

    def connect_failed(self, error: str, *, hung: bool) -> None:
        """A connect failed: Chrome is down until a probe sees it answer."""
        failures = self._health.connect_failures + 1
        self._set("down", last_error=error, hung=hung, connect_failures=failures)
        self._start_watch()

    async def lost(self, error: str, result: ProbeResult | None = None) -> None:
        """The connection broke mid-operation: a quick probe (unless `result` is one) says
        whether Chrome is gone (refused: down) or may answer the next call (not down)."""
        if result is None:
            result = await probe(self._endpoint(), RECHECK_TIMEOUT_S)
        if result.ok:
            self._set("up", last_error=error)
        elif result.hung:
            self._set("unknown", last_error=f"{error}; {result.error}", hung=True)
        else:
            self.connect_failed(f"{error}; {result.error}", hung=False)

    async def still_down(self) -> bool:
        """While down: True, unless a re-check now finds Chrome back.

        The call re-checks itself only when the last failure was quick (a refused port answers
        in about a millisecond); after a timeout it leaves that to the background probe, so
        no call ever waits on a Chrome that does not answer.
        """
        if not self.down:
            return False
        if self._health.hung:
            return True
        self._record(await probe(self._endpoint(), RECHECK_TIMEOUT_S))
        return self.down

    def close(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()

    # -- the background probe ------------------------------------------------------------

    def _start_watch(self) -> None:
        if self._task is not None and not self._task.done():
            return
        with contextlib.suppress(RuntimeError):  # no running loop: calls re-check instead
            self._task = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        log.info("health.probe_started", endpoint=self._endpoint())
        while self.down:
            await asyncio.sleep(PROBE_INTERVAL_S)
            if self.down:
                self._record(await probe(self._endpoint(), PROBE_TIMEOUT_S))

    def _record(self, result: ProbeResult) -> None:
        if result.ok:
            if self.down:
                down_ms = int((time.time() - self._health.since) * 1000)
                log.info("health.chrome_back", endpoint=self._endpoint(), down_ms=down_ms)
                self._set("up", hung=False)
            return
        if result.hung != self._health.hung:
            log.info("health.probe_failed", endpoint=self._endpoint(), error=result.error)
        self._health = replace(self._health, last_error=result.error, hung=result.hung)

    def _set(self, state: HealthState, **changes: Any) -> None:
        if state != self._health.state:
            log.info(
                "health.changed",
                endpoint=self._endpoint(),
                state=state,
                was=self._health.state,
                error=changes.get("last_error"),
            )
            changes["since"] = time.time()
        self._health = replace(self._health, state=state, endpoint=self._endpoint(), **changes)


async def probe(endpoint: str, timeout: float = PROBE_TIMEOUT_S) -> ProbeResult:
    """`GET /json/version` on the DevTools endpoint (http/https/ws/wss), within `timeout`."""
    started = time.monotonic()

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        async with asyncio.timeout(timeout):
            await _get_version(endpoint)
    except TimeoutError:
        return ProbeResult(False, took(), f"no answer within {timeout:.2f} s", hung=True)
    except ConnectionRefusedError:
        return ProbeResult(False, took(), "connection refused")
    except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
        return ProbeResult(False, took(), f"{type(exc).__name__}: {exc}"[:200])
    return ProbeResult(True, took())


async def _get_version(endpoint: str) -> dict[str, Any]:
    parts = urllib.parse.urlsplit(endpoint)
    secure = parts.scheme in ("https", "wss")
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if secure else 80)
    context = ssl.create_default_context() if secure else None
    reader, writer = await asyncio.open_connection(host, port, ssl=context)
    try:
        authority = parts.netloc.rpartition("@")[2]
        request = f"GET /json/version HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
        writer.write(request.encode("ascii"))
        await writer.drain()
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        status = head.split(" ", 2)[1] if head.count(" ") >= 2 else ""
        if status != "200":
            raise ValueError(f"HTTP {status or '?'} from {endpoint}/json/version")
        body = await reader.readexactly(_content_length(head))
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("/json/version did not answer a JSON object")
    return data


def _content_length(head: str) -> int:
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
            if 0 <= length <= _MAX_RESPONSE:
                return length
    raise ValueError("/json/version answered without a usable Content-Length")
