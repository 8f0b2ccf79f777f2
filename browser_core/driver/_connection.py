"""The CDP connection to the broadcast Chrome: attach with bounded tries and backoff, drop,
recycle now and then, and what is known of Chrome's health between calls (`_health`).

Failure modes it guards against: a restarted Chrome (a transparent reconnect at the next
call); a Chrome that is down (after a failed connect calls fail at once with
`cdp-unreachable` while a background probe watches for its return); a hung Chrome that takes
connections but never answers (no retry: it would cost as much again); Playwright's memory
growing over a long run (every `RECYCLE_OPS` operations the connection and Playwright's Node
driver are dropped; the next operation starts fresh ones, about 0.5-0.8 s once).

Beside Playwright's, it keeps a raw CDP socket to the same Chrome for the early body
(`_cdp_channel`), opened on first use and dropped with the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

import structlog
from playwright.async_api import Browser, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from .._errors import CdpUnreachable, OperationTimeout
from .._memory import driver_node_options
from .._settings import Settings
from ._cdp_channel import CdpChannel, CdpChannelError
from ._deadline import Deadline
from ._health import PROBE_TIMEOUT_S, HealthMonitor, probe
from ._playwright_errors import ErrorClass, classify_error, short

# Called with (endpoint, budget) once Chrome answers, before attaching (the owned tab's
# check for a stuck tab, which would make the attach hang).
BeforeAttach = Callable[[str, float], Awaitable[None]]
log = structlog.get_logger("browser_core.driver")

# Playwright keeps every request, response and route of a connection alive (up to 10,000 of
# each, on both sides) and its Node driver's heap creeps: every this many operations, drop
# the connection and stop the driver; the next operation starts a fresh one and reattaches
# to the same tab (about 0.5-0.8 s, once; see docs/performance.md, "Soak").
RECYCLE_OPS = 200
CHANNEL_RETRY_S = 30.0  # a raw socket that could not be opened is not tried again before this
CDP_HINT = "start it with `stream-browser chrome` (or run Chrome with --remote-debugging-port)"


class Connection:
    """Playwright attached to Chrome over CDP, or not; `health` remembers how Chrome was."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.browser: Browser | None = None
        self.playwright: Playwright | None = None
        self.health = HealthMonitor(lambda: self.settings.cdp_endpoint)
        self.closed = False
        self._ops_done = 0
        self._recycle_due = False
        self.endpoint = ""  # the one attached to
        self._channel: CdpChannel | None = None
        self._channel_failed_at = -CHANNEL_RETRY_S

    @property
    def connected(self) -> bool:
        return self.browser is not None and self.browser.is_connected()

    async def refuse_if_down(self, op: str) -> None:
        """Fail at once while Chrome is known to be down (no connect, no wait in line)."""
        if not await self.health.still_down():
            return
        health = self.health.snapshot()
        endpoint = self.settings.cdp_endpoint
        raise CdpUnreachable(
            f"{op}: Chrome at {endpoint} is down ({health.last_error}); it is used again as "
            "soon as it answers",
            hint=CDP_HINT,
            endpoint=endpoint,
        )

    # -- attaching -----------------------------------------------------------------------------

    async def connect(self, deadline: Deadline, before_attach: BeforeAttach) -> None:
        """Attach with bounded tries; a failure marks Chrome down (see `health`)."""
        if self.closed:
            raise CdpUnreachable("the driver was closed", endpoint=self.settings.cdp_endpoint)
        await self.drop(None)
        endpoint = self.settings.cdp_endpoint  # re-resolved on every connect
        delay, error, hung = 0.2, "", False
        for attempt in range(1, self.settings.connect_attempts + 1):
            budget = min(self.settings.connect_timeout_s, deadline.remaining())
            if budget <= 0.05:
                break
            started = time.monotonic()
            log.info("driver.connect_attempt", endpoint=endpoint, attempt=attempt)
            browser, error, hung = await self._connect_once(endpoint, budget, before_attach)
            if browser is not None:
                self.browser, self.endpoint = browser, endpoint
                self.health.connected()
                elapsed_ms = int((time.monotonic() - started) * 1000)
                log.info(
                    "driver.connected", endpoint=endpoint, attempt=attempt, elapsed_ms=elapsed_ms
                )
                return
            log.info("driver.connect_failed", endpoint=endpoint, attempt=attempt, error=error)
            if hung or attempt == self.settings.connect_attempts:
                break  # hung: it takes connections but does not answer; retrying costs as much
            await asyncio.sleep(min(delay, deadline.remaining()))
            delay *= 2.5
        if not error:  # the deadline was spent before any try: that says nothing about Chrome
            raise OperationTimeout(f"no time left to attach to Chrome at {endpoint}")
        self.health.connect_failed(error, hung=hung)
        raise CdpUnreachable(
            f"Chrome is not reachable at {endpoint} ({error})", hint=CDP_HINT, endpoint=endpoint
        )

    async def _connect_once(
        self, endpoint: str, budget: float, before_attach: BeforeAttach
    ) -> tuple[Browser | None, str, bool]:
        """Probe the HTTP endpoint (short timeout), then attach: (browser, error, hung).

        Playwright's driver (0.5-0.8 s to start) is started only once Chrome answers.
        """
        result = await probe(endpoint, min(PROBE_TIMEOUT_S, budget))
        if not result.ok:
            return None, result.error or "no answer", result.hung
        await before_attach(endpoint, budget)
        if self.playwright is None:
            with driver_node_options():  # a small V8 young generation: flat driver memory
                self.playwright = await async_playwright().start()
        try:
            browser = await asyncio.wait_for(
                self.playwright.chromium.connect_over_cdp(endpoint, timeout=budget * 1000), budget
            )
        except TimeoutError:
            return None, f"attaching took longer than {budget:.1f} s", True
        except PlaywrightError as exc:
            return None, short(exc), classify_error(exc) is ErrorClass.TIMEOUT
        return browser, "", False

    async def cdp_channel(self) -> CdpChannel | None:
        """The raw CDP socket to the attached Chrome (opened on first use), or None: not
        attached, or it could not be opened lately (the caller uses Playwright's session)."""
        if self._channel is not None and not self._channel.closed:
            return self._channel
        if not self.connected or time.monotonic() - self._channel_failed_at < CHANNEL_RETRY_S:
            return None
        try:
            self._channel = await CdpChannel.open(self.endpoint)
        except CdpChannelError as exc:
            self._channel_failed_at = time.monotonic()
            log.info("driver.cdp_channel_unavailable", endpoint=self.endpoint, error=str(exc))
            return None
        return self._channel

    # -- letting go ----------------------------------------------------------------------------

    async def drop(self, page: Page | None) -> None:
        """Drop the connection (Chrome and its tabs stay); `page`, the owned tab's page on
        it, has its routes removed first."""
        browser, self.browser = self.browser, None
        channel, self._channel = self._channel, None
        if channel is not None:
            await channel.close()
        if page is not None and not page.is_closed() and browser is not None:
            # Route handlers still running (a recording's, the guard's) would fail on the
            # closed connection and print "Task exception was never retrieved".
            with contextlib.suppress(TimeoutError, PlaywrightError):
                await asyncio.wait_for(page.unroute_all(behavior="ignoreErrors"), 1.0)
        if browser is not None:
            with contextlib.suppress(TimeoutError, PlaywrightError):
                await asyncio.wait_for(browser.close(), 1.0)

    def count_op(self, *, busy: bool = False) -> bool:
        """One more operation done; True when it is time to recycle (every `RECYCLE_OPS`;
        while a call waits for the tab (`busy`) the recycle waits for a quiet moment, at most
        `RECYCLE_OPS - 1` operations more)."""
        self._ops_done += 1
        if not self._ops_done % RECYCLE_OPS:
            self._recycle_due = True
        if not self._recycle_due:
            return False
        if busy and self._ops_done % RECYCLE_OPS < RECYCLE_OPS - 1:
            return False  # not while a call waits for the tab (at most RECYCLE_OPS - 1 more)
        self._recycle_due = False
        return True

    async def recycle(self, page: Page | None) -> None:
        """Drop the connection and stop the Playwright driver (Chrome, its tabs and a playing
        video stay); the next operation reattaches."""
        log.info("driver.connection_recycled", ops=self._ops_done)
        await self.drop(page)
        await self._stop_playwright()

    async def close(self, page: Page | None) -> None:
        """For good: no connect after this."""
        self.closed = True
        self.health.close()
        await self.drop(page)
        await self._stop_playwright()

    async def _stop_playwright(self) -> None:
        pw, self.playwright = self.playwright, None
        if pw is not None:
            with contextlib.suppress(TimeoutError, PlaywrightError):
                await asyncio.wait_for(pw.stop(), 5)
