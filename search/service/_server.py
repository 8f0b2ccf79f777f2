"""Serving: uvicorn's h11 protocol with a deadline no client can stall, a server that drains
on SIGTERM, and `prepare`/`serve`."""

from __future__ import annotations

import asyncio
import gc
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import h11
import structlog
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from browser_core import (
    Settings,
    configure_logging,
)

from .._meaning import warm as warm_model
from .._tool import BrowseTool
from ..parsers.article import warm_up
from ._access import Access
from ._app import create_app
from ._bind import Bound, StartRefused, bind, check_exposure
from ._core import Service
from ._token import ensure_token, token_path

log = structlog.get_logger("search.service")

# A request (head and body) must have arrived this long after its connection opened or the
# previous answer was sent (a loopback client sends it in milliseconds), else it is closed.
REQUEST_TIMEOUT_S = 10.0
# Connections open at once (fewer when the process may open fewer files): at the limit a new
# connection pushes out the one idle the longest, so idle sockets cannot take every file
# descriptor (systemd's default soft limit is 1024) nor keep anyone out.
MAX_CONNECTIONS = 128
# Requests a peer may send ahead of its answers (queued at once, or answer after answer)
# before it is closed: no HTTP client in use pipelines; one that does and never reads its
# answers holds its connection and makes the service answer for nobody.
MAX_PIPELINED = 4
# Seconds an answer may wait for a peer that does not read it (the socket's buffers full).
WRITE_STALL_S = 5.0
_SPARE_FDS = 32  # for Chrome's CDP socket, the state files, logs


def connection_limit() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(4, min(MAX_CONNECTIONS, soft // 2 - _SPARE_FDS))


class _DeadlineH11(H11Protocol):
    """uvicorn's h11 protocol with limits no client can get round.

    uvicorn has no timeout before a connection's first request, nor while a request head or
    body trickles in, nor while an answer waits for a peer that never reads it; and it
    answers pipelined requests one by one for as long as they come. Any local program could
    hold connections until nobody else is accepted, without a token. Here the whole request
    must arrive within `REQUEST_TIMEOUT_S` of the connection (or of the previous answer);
    a peer more than `MAX_PIPELINED` requests ahead of its answers, or that leaves an answer
    unread for `WRITE_STALL_S`, is closed; and at the connection limit a new connection
    closes the one idle the longest (never one whose call is running). A call that is
    running is never cut.
    """

    _deadline: asyncio.TimerHandle | None = None
    _stall: asyncio.TimerHandle | None = None
    _ahead = 0
    _active = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._active = time.monotonic()
        if self._open() > connection_limit() and not self._evict_one():
            transport.close()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        self._active = time.monotonic()
        super().data_received(data)
        # whole requests waiting behind the one being answered (h11 holds them)
        queued = self.conn.trailing_data[0].count(b"\r\n\r\n")
        if queued > MAX_PIPELINED and not self.transport.is_closing():
            self._cut("pipelined", ahead=queued)

    def on_response_complete(self) -> None:
        self._active = time.monotonic()
        # the next request was already here before this answer went out: pipelined
        self._ahead = self._ahead + 1 if self.conn.trailing_data[0] else 0
        if self._ahead > MAX_PIPELINED:
            self._cut("pipelined", ahead=self._ahead)
            return
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection has the same deadline

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stall is None:
            self._stall = self.loop.call_later(WRITE_STALL_S, self._cut, "not reading")

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        super().connection_lost(exc)

    @property
    def busy(self) -> bool:
        """A request is in and its caller waits for the answer: never pushed out. (A peer
        with requests queued behind it, or not reading, is not waiting for anything.)"""
        running = self.cycle is not None and not self.cycle.response_complete
        waiting = self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
        ahead = bool(self.conn.trailing_data[0])
        return running and not waiting and not ahead and not self.flow.write_paused

    def _open(self) -> int:
        return sum(not c.transport.is_closing() for c in self.connections)

    def _evict_one(self) -> bool:
        others = [c for c in self.connections if c is not self and isinstance(c, _DeadlineH11)]
        idle = [c for c in others if not c.busy and not c.transport.is_closing()]
        if not idle:
            log.warning("service.connections_full", open=len(self.connections))
            return False
        oldest = min(idle, key=lambda c: c._active)
        oldest._cut("pushed out", idle_s=round(time.monotonic() - oldest._active, 1))
        return True

    def _cut(self, reason: str, **fields: Any) -> None:
        """Close at once, dropping what the peer has not read (close() would wait for it)."""
        log.info("service.connection_closed", reason=reason, **fields)
        self._disarm()
        self.transport.abort()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(REQUEST_TIMEOUT_S, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        waiting_for = {h11.IDLE: "request", h11.SEND_BODY: "body"}.get(self.conn.their_state)
        if waiting_for is None or self.transport.is_closing():
            return  # the request is in; its answer may take as long as the call does
        log.info("service.request_timeout", waiting_for=waiting_for, after_s=REQUEST_TIMEOUT_S)
        self.transport.close()


class _DrainingServer(uvicorn.Server):
    """uvicorn's server with a drain on the first SIGTERM/SIGINT instead of a quick stop.

    (uvicorn re-raises a captured signal after shutdown, which would end the process with
    status 143; a drained service exits 0.) A second signal stops at once. `ready` is told
    once the server has started, inside uvicorn's signal capture: a SIGTERM sent as soon as
    "serving on" is printed drains (before, one sent in that moment ended it with -15).
    """

    def __init__(self, config: Any, service: Service) -> None:
        super().__init__(config)
        self.service = service
        self.ready: Callable[[], None] | None = None

    async def startup(self, sockets: list[Any] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self.ready is not None:
            self.ready()

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self.service.draining:
            self.should_exit = self.force_exit = True
            return
        self.service.drain()
        log.info("service.draining", signal=sig, running=self.service.queue.running)

    async def on_tick(self, counter: int) -> bool:
        self.service.end_grace_if_due()
        if self.service.may_exit():
            self.should_exit = True
        return bool(await super().on_tick(counter))


@dataclass
class Prepared:
    """A bound, not yet running service: `run()` blocks until it stops (`stop()`)."""

    server: _DrainingServer
    bound: Bound
    token: str

    @property
    def url(self) -> str:
        return self.bound.url

    def run(self) -> None:
        self.server.run(sockets=[self.bound.sock])

    def stop(self) -> None:
        self.server.should_exit = True

    def listen(self) -> None:
        """After `configure_logging`: the console's tap among structlog's processors, so
        it hears the egress refusals (the guard's events) of every call."""
        watcher = self.server.service.watcher
        tap = getattr(watcher, "ring", None)
        if tap is None:
            return
        processors = list(structlog.get_config()["processors"])
        if tap.tap not in processors:
            processors.insert(max(0, len(processors) - 1), tap.tap)
            structlog.configure(processors=processors)


def prepare(settings: Settings, tool: BrowseTool | None = None) -> Prepared:
    """Check the exposure, find or make the token, bind, build the app. `StartRefused`."""
    check_exposure(settings)
    try:
        token, source = ensure_token(settings)
    except OSError as exc:  # SB_STATE_DIR not writable: one line, not a traceback
        raise StartRefused(
            f"cannot keep the service token in {token_path(settings)} "
            f"({exc.strerror or exc}): set SB_STATE_DIR to a folder this user can write, "
            "or set SB_SERVICE_TOKEN"
        ) from None
    bound = bind(settings)
    service = Service.create(settings, tool)
    app = create_app(service, Access(token, bound.hosts))
    config = uvicorn.Config(
        app,
        loop="asyncio",
        http=_DeadlineH11,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(settings.call_deadline_s) + 5,
        server_header=False,
    )
    log.info("service.started", url=bound.url, auth_from=source, queue_max=settings.queue_max)
    return Prepared(_DrainingServer(config, service), bound, token)


def _warm_up(settings: Settings) -> None:
    try:
        warm_up()
        warm_model(settings)  # the reading model (SB_READ_MODEL): ~1 s, once
    except Exception as exc:  # only the first call then pays for it
        log.info("service.warm_up_failed", error=str(exc)[:200])


def serve(settings: Settings, *, ready: Callable[[str], None] | None = None) -> int:
    """Run until SIGTERM/SIGINT; 0 after a clean drain. Raises `StartRefused`."""
    prepared = prepare(settings)
    # the log scrubber also knows a generated token (SB_SERVICE_TOKEN is in the settings)
    secrets_ = (*settings.secret_values(), prepared.token)
    configure_logging(
        settings.log_level, settings.log_format, secrets=secrets_, instance=settings.instance
    )
    prepared.listen()  # the console hears the egress guard's refusals from here on
    # built once for the process's life, before a call needs it (a first read pays ~140 ms)
    threading.Thread(target=_warm_up, args=(settings,), name="warm-up", daemon=True).start()
    if ready is not None:
        prepared.server.ready = lambda: ready(prepared.url)
    prepared.run()
    log.info("service.stopped", url=prepared.url)
    # The interpreter's last garbage collection would walk every object the readers built
    # (seconds on two cores) while the engine's kill may be due: nothing is left to free.
    gc.freeze()
    return 0
