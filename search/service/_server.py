"""Serving: uvicorn's h11 protocol with a deadline no client can stall, a server that drains
on SIGTERM, and `prepare`/`serve`."""

from __future__ import annotations

import asyncio
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

from .._tool import BrowseTool
from ._access import Access
from ._app import create_app
from ._bind import Bound, StartRefused, bind, check_exposure
from ._core import Service
from ._token import ensure_token, token_path

log = structlog.get_logger("search.service")

# A request (head and body) must have arrived this long after its connection opened or the
# previous answer was sent (a loopback client sends it in milliseconds), else it is closed.
REQUEST_TIMEOUT_S = 10.0
# Connections open at once; more are closed on arrival, so idle sockets cannot take every
# file descriptor the process has (systemd's default soft limit is 1024).
MAX_CONNECTIONS = 128


class _DeadlineH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline no client can stall.

    uvicorn has no timeout before a connection's first request, nor while a request head or
    body trickles in: any local user could hold sockets until the process runs out of file
    descriptors and accepts nobody, without a token. Here the whole request must arrive
    within `REQUEST_TIMEOUT_S` of the connection (or of the previous answer), and at most
    `MAX_CONNECTIONS` are open at once. A call that is running is never cut: the deadline
    only covers receiving the request.
    """

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MAX_CONNECTIONS:
            transport.close()
            return
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection has the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

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
    status 143; a drained service exits 0.) A second signal stops at once.
    """

    def __init__(self, config: Any, service: Service) -> None:
        super().__init__(config)
        self.service = service

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self.service.draining:
            self.should_exit = self.force_exit = True
            return
        self.service.drain()
        log.info("service.draining", signal=sig, running=self.service.queue.running)

    async def on_tick(self, counter: int) -> bool:
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


def serve(settings: Settings, *, ready: Callable[[str], None] | None = None) -> int:
    """Run until SIGTERM/SIGINT; 0 after a clean drain. Raises `StartRefused`."""
    prepared = prepare(settings)
    # the log scrubber also knows a generated token (SB_SERVICE_TOKEN is in the settings)
    secrets_ = (*settings.secret_values(), prepared.token)
    configure_logging(settings.log_level, settings.log_format, secrets=secrets_)
    if ready is not None:
        ready(prepared.url)
    prepared.run()
    log.info("service.stopped", url=prepared.url)
    return 0
