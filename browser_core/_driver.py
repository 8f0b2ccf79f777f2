"""The CDP driver: attach to the broadcast Chrome, own one tab, run operations one at a time.

Failure modes it guards against: a frozen Chrome never reports a disconnect (every CDP call
has an explicit deadline, and a timed-out connection is dropped so the next call reconnects);
a restarted Chrome (transparent reconnect with bounded tries and backoff); a Chrome that is
down (its health is remembered: after a failed connect calls fail at once with
`cdp-unreachable` while a background probe watches for its return); two callers driving the
one visible tab at once (a FIFO lock in the process and a file lock across processes, whose
waits count against the deadline); tabs piling up (one owned tab, popups it opens are closed,
other tabs are never touched); a page left spinning (`while(true)`) holding up the next call
(it is found unresponsive within a second, closed over HTTP and replaced by a blank tab).

Health API (for the service's `/v1/status`, `/readyz` and `/metrics`): `driver.health` is a
`ChromeHealth` snapshot, safe to read from any thread: `state` ("up" | "down" | "unknown"),
`since` (Unix time of the last change), `last_error`, `reconnects` (successful connects after
the first), `connect_failures`, `hung` (the last failure was a timeout), `connected`,
`probing` (the background probe is running); `.as_dict()` gives them as JSON-ready fields.
Ready means `state != "down"`.

Playwright errors are classified by type (`classify_error`): its `TimeoutError`, an error
named `TargetClosedError`; the few text markers that remain live in `ERROR_MARKERS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, NoReturn, TypeVar
from urllib.parse import urldefrag

import structlog
from playwright.async_api import Browser, BrowserContext, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from ._cdp_raw import tab_responds
from ._chrome import cdp_targets, close_target, load_state
from ._early_body import EarlyBody, armed
from ._errors import (
    BlockedUrl,
    CdpUnreachable,
    NavigationFailed,
    OperationTimeout,
    ProviderError,
)
from ._health import PROBE_TIMEOUT_S, ChromeHealth, HealthMonitor, ProbeResult, probe
from ._memory import driver_node_options
from ._settings import Settings
from ._spare_tabs import BLANK_URLS, SpareTabs
from ._tablock import TabLock
from .safety._fetch_guard import install_fetch_guard
from .safety._policy import check_url, internal_request, is_allowed
from .stage._focus import drain as drain_stage
from .stage._screen import after_op, prepare_page

T = TypeVar("T")
PageHook = Callable[[Page], Awaitable[None]]
# What the stage shows after an operation's answer is handed back: `show(page, answer)`.
Show = Callable[[Page, T], Awaitable[Any]]
WaitUntil = Literal["commit", "domcontentloaded", "load", "networkidle"]
log = structlog.get_logger("browser_core.driver")

NEUTRAL_URL = "about:blank"
# -1 once `load` has fired, else how much text the page has so far.
_TEXT_SIZE_JS = (
    "() => document.readyState === 'complete' ? -1 : "
    "(document.body ? document.body.textContent.length : 0)"
)
_SETTLED_TEXT = 200  # characters: below this a page is probably still being rendered
_SETTLE_POLL_S = 0.15
# A tab whose page does not run `1` within this is wedged (a busy loop): it is replaced.
_RESPONSIVE_S = 1.0
# Before attaching, a tab that does not run `1` over raw CDP within this (a few ms when it
# is fine) is held by a JS dialog or a busy loop: it is replaced.
_STUCK_S = 1.0
# Playwright keeps every request, response and route of a connection alive (up to 10,000 of
# each, on both sides) and its Node driver's heap creeps: every this many operations, drop
# the connection and stop the driver; the next operation starts a fresh one and reattaches
# to the same tab (about 0.5-0.8 s, once; see docs/performance.md, "Soak").
RECYCLE_OPS = 200
# The longest the stage's work after an answer holds the tab (the next call waits at most
# this); a mark still unfinished then is made in the background, without the tab.
STAGE_HOLD_S = 1.5
_CDP_HINT = "start it with `stream-browser chrome` (or run Chrome with --remote-debugging-port)"


class Deadline:
    """A point in time; `remaining()` is what is left of it (never negative)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.at = self.started + seconds

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)


@dataclass(frozen=True)
class NavOutcome:
    """Where a navigation ended: final URL, HTTP status, content type."""

    url: str
    status: int | None
    content_type: str
    download: bool = False
    response: Any = field(default=None, compare=False, repr=False)
    body: str | None = field(default=None, compare=False, repr=False)  # see `_early_body`

    @property
    def is_html(self) -> bool:
        return not self.content_type or "html" in self.content_type or "xml" in self.content_type


class ErrorClass(StrEnum):
    """What a Playwright error means to the driver."""

    TIMEOUT = "timeout"  # a Playwright wait ran out (its own `timeout=`)
    CLOSED = "closed"  # the page, the connection or the renderer is gone
    DOWNLOAD = "download"  # a navigation turned into a download
    ABORTED = "aborted"  # a navigation was aborted (a 204, a download, Chrome going away)
    MOVED = "moved"  # the page went on to another document while it was being read
    OTHER = "other"


# The only text markers left: Playwright gives these no type, name or code (Playwright 1.65,
# measured on Chromium 156). One row each; tests/test_driver_errors.py has a test per row.
ERROR_MARKERS: tuple[tuple[str, ErrorClass], ...] = (
    ("Download is starting", ErrorClass.DOWNLOAD),  # Page.goto to an attachment
    ("net::ERR_ABORTED", ErrorClass.ABORTED),  # Page.goto to a 204, or the load was cancelled
    ("Target crashed", ErrorClass.CLOSED),  # the renderer crashed (a plain Error)
    ("no object with guid", ErrorClass.CLOSED),  # a Playwright object of a closed page
    # Page.content while the document is replaced (a meta refresh or script redirect commits)
    ("page is navigating and changing the content", ErrorClass.MOVED),
)


def classify_error(exc: BaseException) -> ErrorClass:
    """Classify a Playwright error: by type and name first, then by `ERROR_MARKERS`."""
    if isinstance(exc, PlaywrightTimeoutError):
        return ErrorClass.TIMEOUT
    # The class is not exported; errors raised on the client side have no `.name`.
    if "TargetClosedError" in (getattr(exc, "name", None), type(exc).__name__):
        return ErrorClass.CLOSED
    text = str(exc)
    for marker, kind in ERROR_MARKERS:
        if marker in text:
            return kind
    return ErrorClass.OTHER


async def document_html(page: Page, *, tries: int = 4, timeout_ms: float = 10_000) -> str:
    """The page's HTML once its document is parsed; a page that moves itself on while it is
    read (a meta refresh, a script redirect to a consent page) is read where it went.

    `page.content()` alone fails when the next document commits during it. After such a
    failure the next read waits for the new address's DOMContentLoaded, not just any: the
    old document's state can still be what Playwright reports. A page that keeps moving
    (`tries` times) still raises, as a page that never settles should.
    """
    await page.wait_for_load_state("domcontentloaded", timeout=timeout_ms)
    for attempt in range(1, tries + 1):
        was = page.url
        try:
            return await page.content()
        except PlaywrightError as exc:
            if classify_error(exc) is not ErrorClass.MOVED or attempt == tries:
                raise
        with contextlib.suppress(PlaywrightTimeoutError):  # a refresh to the same address
            await page.wait_for_url(
                _elsewhere(was), wait_until="domcontentloaded", timeout=min(timeout_ms, 3000)
            )
    raise AssertionError("unreachable")


def _elsewhere(was: str) -> Callable[[str], bool]:
    return lambda now: now != was


def _is_closed_error(exc: BaseException) -> bool:
    return classify_error(exc) is ErrorClass.CLOSED


class Driver:
    """One attached Chrome and one owned tab. Async; see `SyncDriver` for threads."""

    def __init__(self, settings: Settings, *, page_hooks: tuple[PageHook, ...] = ()) -> None:
        self.settings = settings
        self.page_hooks: list[PageHook] = list(page_hooks)
        self._pw: Playwright | None = None
        self._ops_done = 0
        self._browser: Browser | None = None
        self._page: Page | None = None
        self._target_id: str | None = self._load_target_id()
        self._lock = asyncio.Lock()
        self._tab_lock = TabLock(self._state_path().with_suffix(".lock"))
        self._health = HealthMonitor(lambda: self.settings.cdp_endpoint)
        self._closed = False
        self._downloads = 0
        self._replaced: set[str] = set()  # tabs closed as stuck: never adopted again
        self._after: asyncio.Future[None] | None = None  # the stage's work after an answer
        self._spares = SpareTabs()  # blank tabs opened over HTTP while replacing one

    # -- public ---------------------------------------------------------------------------

    async def run(
        self,
        op: str,
        fn: Callable[[Page], Awaitable[T]],
        *,
        timeout: float | None = None,
        show: Show[T] | None = None,
    ) -> T:
        """Run `fn(page)` on the owned tab when it is our turn, within the deadline.

        The answer is handed back as soon as `fn` has it. What the stage does for viewers
        after it (`show(page, answer)`, then the quiet page and the driver's housekeeping)
        follows on the same tab, holding it for at most `STAGE_HOLD_S`, so the next call
        waits at most for what is left of it. While Chrome is known to be down this fails
        at once with `CdpUnreachable`.
        """
        deadline = Deadline(timeout if timeout is not None else self.settings.op_timeout_s)
        bound = log.bind(op=op)
        try:
            await self._refuse_if_down(op)
            await self._take_turn(op, deadline)
        except ProviderError as exc:
            bound.warning(
                "driver.op_failed",
                failure_kind=exc.kind,
                waited=isinstance(exc, OperationTimeout),
                chrome=self._health.snapshot().state,
                elapsed_ms=deadline.elapsed_ms(),
                error=str(exc)[:300],
            )
            raise
        handed_over = False
        try:
            await self._refuse_if_down(op)
            page, result = await self._run_locked(op, fn, deadline)
            self._after = asyncio.ensure_future(self._after_answer(op, page, result, show))
            handed_over = True  # the stage's step releases the tab when it is done
        except ProviderError as exc:
            bound.warning(
                "driver.op_failed",
                failure_kind=exc.kind,
                elapsed_ms=deadline.elapsed_ms(),
                error=str(exc)[:300],
            )
            raise
        finally:
            if not handed_over:
                self._release_turn()
        bound.info("driver.op", elapsed_ms=deadline.elapsed_ms())
        return result

    async def stage_done(self, timeout: float = STAGE_HOLD_S + 1.0) -> None:
        """Wait (at most `timeout`) until the stage's work after the last answer is done and
        the tab is free: for a one-shot command before it exits, and for tests that look at
        the screen."""
        after = self._after
        if after is not None and not after.done():
            await asyncio.wait({after}, timeout=timeout)

    def _release_turn(self) -> None:
        self._tab_lock.release()
        self._lock.release()

    async def _after_answer(self, op: str, page: Page, result: Any, show: Show[Any] | None) -> None:
        """The show after the answer, on the tab still ours: the stage's marks (bounded by
        `STAGE_HOLD_S`; a step still unfinished then goes on without the tab), the page
        made quiet, the connection recycled now and then. Never raises."""
        started = time.perf_counter()
        try:
            if show is not None:
                step = asyncio.ensure_future(show(page, result))
                done, _ = await asyncio.wait({step}, timeout=STAGE_HOLD_S)
                if done and not step.cancelled() and step.exception() is not None:
                    log.info("stage.show_failed", op=op, error=str(step.exception())[:200])
            await after_op(page, op)  # no sound after the call but the player's (bounded)
            await self._recycle_now_and_then()
        except Exception as exc:  # a gone page or Chrome: the next call finds out
            log.info("driver.after_answer_failed", op=op, error=str(exc)[:200])
        finally:
            self._release_turn()
            held_ms = round((time.perf_counter() - started) * 1000, 1)
            log.debug("driver.tab_held_after_answer", op=op, held_ms=held_ms)

    @property
    def health(self) -> ChromeHealth:
        """What the driver knows about Chrome (see the module docstring); any thread."""
        return self._health.snapshot(connected=self.connected)

    async def navigate(
        self,
        page: Page,
        url: str,
        *,
        timeout: float | None = None,
        settle_ms: int | None = None,
        check: bool = True,
        wait_until: WaitUntil = "domcontentloaded",
    ) -> NavOutcome:
        """Open `url` in `page` under the navigation policy; wait for DOM plus a capped settle.

        With `wait_until="commit"` it returns as soon as the response starts (no settle), so a
        caller can parse `outcome.response` while the page keeps painting for viewers.
        """
        if check:
            url = await self.check(url)
        nav_ms = (timeout or self.settings.nav_timeout_s) * 1000
        self._downloads = 0
        try:
            response, early = await self._goto(page, url, wait_until, nav_ms)
        except PlaywrightError as exc:
            return await self._navigation_error(page, url, exc)
        outcome = NavOutcome(
            url=page.url,
            status=response.status if response else None,
            content_type=(response.headers.get("content-type", "") if response else ""),
            response=response,
            body=early.text if early is not None and _same_document(early.url, page.url) else None,
        )
        self._check_redirects(response, page.url)
        if not self._page_allowed(page.url):
            await page.goto(NEUTRAL_URL)
            raise BlockedUrl(
                f"refused: the page redirected to {page.url[:200]}",
                url=page.url[:200],
                reason="redirect",
            )
        if wait_until != "commit":
            await self.settle(page, settle_ms)
        return outcome

    async def _goto(
        self, page: Page, url: str, wait_until: WaitUntil, nav_ms: float
    ) -> tuple[Any, EarlyBody | None]:
        """`page.goto`; with "commit", the document's body is taken from the network on the
        way (`_early_body`), and a body too slow for that is opened again the usual way."""
        if wait_until != "commit":
            return await page.goto(url, wait_until=wait_until, timeout=nav_ms), None
        started = time.monotonic()
        async with armed(page) as arming:
            try:
                response = await page.goto(url, wait_until=wait_until, timeout=nav_ms)
            except PlaywrightError as exc:
                first = arming.body.result() if arming.body.done() else None
                if first is not None and _INTERRUPTED in str(exc):
                    # Its document came, and moved the page on at once (a script redirect,
                    # as Google's own to a consent or "sorry" page): once where it went has
                    # committed, the caller reads that page from the DOM.
                    left_ms = nav_ms - (time.monotonic() - started) * 1000
                    with contextlib.suppress(PlaywrightError):
                        await page.wait_for_url(
                            lambda now: not _same_document(now, first.url),
                            wait_until="commit",
                            timeout=max(left_ms, 1000),
                        )
                    return None, None
                if not arming.gave_up:
                    raise
            else:
                return response, arming.body.result() if arming.body.done() else None
        left_ms = nav_ms - (time.monotonic() - started) * 1000
        return await page.goto(url, wait_until=wait_until, timeout=max(left_ms, 1000)), None

    async def settle(self, page: Page, settle_ms: int | None = None) -> None:
        """Wait until `load`, or until the page's text stops changing, within the settle cap.

        Never an unbounded networkidle: a page whose images or trackers never finish would
        otherwise cost the whole cap on every read.
        """
        cap = self.settings.settle_ms if settle_ms is None else settle_ms
        until = time.monotonic() + cap / 1000
        last = None
        while time.monotonic() < until:
            try:
                size = await page.evaluate(_TEXT_SIZE_JS)
            except PlaywrightError:
                return  # navigated away or closed: nothing left to wait for
            if size < 0 or (size == last and size >= _SETTLED_TEXT):
                return
            last = size
            await asyncio.sleep(min(_SETTLE_POLL_S, max(0.0, until - time.monotonic())))

    async def check(self, url: str) -> str:
        """Apply the navigation policy (DNS lookups run off the event loop)."""
        allow = self.settings.allow_hosts
        try:
            return await asyncio.wait_for(asyncio.to_thread(check_url, url, allow), 3.0)
        except TimeoutError:
            return check_url(url, allow, resolver=None)

    async def close(self) -> None:
        """Drop the connection (Chrome and its tabs stay up) and stop Playwright."""
        await self.stage_done()
        await drain_stage(1.0)  # a mark the stage is still making on the tab (one-shot CLI)
        self._closed = True
        self._health.close()
        await self._drop()
        self._tab_lock.close()
        if self._pw is not None:
            pw, self._pw = self._pw, None
            with contextlib.suppress(TimeoutError, PlaywrightError):
                await asyncio.wait_for(pw.stop(), 5)

    async def close_owned_tab(self) -> None:
        """Close the tab we opened (used by tests and `stream-browser chrome --stop`)."""
        await self.stage_done()
        locked = await self._tab_lock.acquire(5.0)
        try:
            page, self._page = self._page, None
            if page is not None and not page.is_closed():
                with contextlib.suppress(TimeoutError, PlaywrightError):
                    await asyncio.wait_for(page.close(), 5)
            if self._load_target_id() in (self._target_id, None):  # not replaced elsewhere
                self._target_id = None
                self._save_target_id()
            self._target_id = None
        finally:
            if locked:
                self._tab_lock.release()

    @property
    def connected(self) -> bool:
        return self._browser is not None and self._browser.is_connected()

    @property
    def owned_target(self) -> str | None:
        """The owned tab's CDP target id (None before the first operation), for observers
        that look at the screen over their own CDP socket (the console's frames)."""
        return self._target_id

    @property
    def owned_url(self) -> str | None:
        """What the owned tab shows, without a CDP call (None before the first operation)."""
        page = self._page
        return None if page is None or page.is_closed() else page.url

    # -- whose turn it is, and whether Chrome is there ---------------------------------------

    async def _refuse_if_down(self, op: str) -> None:
        """Fail at once while Chrome is known to be down (no connect, no wait in line)."""
        if not await self._health.still_down():
            return
        health = self._health.snapshot()
        endpoint = self.settings.cdp_endpoint
        raise CdpUnreachable(
            f"{op}: Chrome at {endpoint} is down ({health.last_error}); it is used again as "
            "soon as it answers",
            hint=_CDP_HINT,
            endpoint=endpoint,
        )

    async def _take_turn(self, op: str, deadline: Deadline) -> None:
        """The FIFO lock of this process, then the file lock shared with other processes."""
        try:
            await asyncio.wait_for(self._lock.acquire(), deadline.remaining())
        except TimeoutError:
            raise _waited(op, deadline, "another operation") from None
        try:
            got = await self._tab_lock.acquire(deadline.remaining())
        except BaseException:
            self._lock.release()
            raise
        if not got:
            self._lock.release()
            raise _waited(op, deadline, "another process")
        self._follow_owned_tab()

    def _follow_owned_tab(self) -> None:
        """Under the file lock: adopt the owned tab another process opened or replaced."""
        stored = self._load_target_id()
        if stored == self._target_id:
            return
        if stored is None:
            self._save_target_id()  # the state file was lost: ours is still the owned tab
            return
        log.info("driver.tab_changed_elsewhere", target_id=stored, was=self._target_id)
        self._target_id, self._page = stored, None

    # -- the locked part ------------------------------------------------------------------

    async def _run_locked(
        self, op: str, fn: Callable[[Page], Awaitable[T]], deadline: Deadline
    ) -> tuple[Page, T]:
        try:
            page = await asyncio.wait_for(self._owned_page(deadline), deadline.remaining())
            result = await asyncio.wait_for(fn(page), deadline.remaining())
            return page, result
        except TimeoutError:
            if self.connected:  # else the time went in attaching: no tab to blame
                await self._recover_after_timeout()
            raise OperationTimeout(
                f"{op} did not finish within {deadline.seconds:.1f} s",
                hint="the page or Chrome is not responding",
            ) from None
        except CdpUnreachable:
            if self._browser is not None and not self._browser.is_connected():
                await self._lost(op, "the connection closed")
            raise
        except PlaywrightError as exc:
            self._raise_for(op, exc, await self._after_error(op, exc))

    async def _recycle_now_and_then(self) -> None:
        """Every RECYCLE_OPS operations drop the connection and stop the Playwright driver
        (Chrome, its tabs and a playing video stay); the next operation reattaches."""
        self._ops_done += 1
        if self._ops_done % RECYCLE_OPS:
            return
        log.info("driver.connection_recycled", ops=self._ops_done)
        await self._drop()
        pw, self._pw = self._pw, None
        if pw is not None:
            with contextlib.suppress(TimeoutError, PlaywrightError):
                await asyncio.wait_for(pw.stop(), 5)

    async def _after_error(self, op: str, exc: PlaywrightError) -> ErrorClass:
        kind = classify_error(exc)
        if kind is ErrorClass.CLOSED or not self.connected:
            await self._lost(op, _short(exc))
            return ErrorClass.CLOSED
        return kind

    def _raise_for(self, op: str, exc: PlaywrightError, kind: ErrorClass) -> NoReturn:
        if kind is ErrorClass.CLOSED:
            raise CdpUnreachable(
                f"{op}: lost the connection to Chrome at {self.settings.cdp_endpoint}",
                hint=_CDP_HINT,
                endpoint=self.settings.cdp_endpoint,
            ) from exc
        if kind is ErrorClass.TIMEOUT:
            raise OperationTimeout(f"{op}: {_short(exc)}", hint="the page is slow") from exc
        raise NavigationFailed(f"{op}: {_short(exc)}") from exc

    async def _lost(self, op: str, error: str) -> None:
        """The connection broke mid-operation: drop it; the health probe says whether Chrome
        is gone (refusing) or may be back at the next call."""
        await self._drop()
        await self._health.lost(f"{op}: {error}")

    async def _owned_page(self, deadline: Deadline) -> Page:
        if not self.connected:
            await self._connect(deadline)
        page = self._page
        if page is None or page.is_closed():
            page = await self._adopt_or_open()
        if not await self._responsive(page):
            await self._replace_wedged_tab()
            page = await self._adopt_or_open()
        await page.bring_to_front()
        return page

    async def _responsive(self, page: Page) -> bool:
        """Does the page run a script at once? A busy loop (`while(true)`) never lets it."""
        try:
            await asyncio.wait_for(page.evaluate("1"), _RESPONSIVE_S)
        except TimeoutError:
            return False
        except PlaywrightError as exc:
            if _is_closed_error(exc):
                raise
        return True

    async def _replace_wedged_tab(self) -> None:
        """Our tab is stuck: close it over HTTP so the next step opens a blank one. When
        Chrome's endpoint does not answer either, Chrome itself is frozen: say so."""
        endpoint = self.settings.cdp_endpoint
        result = await probe(endpoint, PROBE_TIMEOUT_S)
        if not result.ok:
            await self._chrome_unresponsive(result)
            raise CdpUnreachable(
                f"Chrome at {endpoint} does not answer ({result.error})",
                hint="is it frozen or overloaded? restart it with `stream-browser chrome`",
                endpoint=endpoint,
            )
        await self._close_wedged_tab()

    async def _connect(self, deadline: Deadline) -> None:
        """Attach with bounded tries; a failure marks Chrome down (see `health`)."""
        if self._closed:
            raise CdpUnreachable("the driver was closed", endpoint=self.settings.cdp_endpoint)
        await self._drop()
        endpoint = self.settings.cdp_endpoint  # re-resolved on every connect
        delay, error, hung = 0.2, "", False
        for attempt in range(1, self.settings.connect_attempts + 1):
            budget = min(self.settings.connect_timeout_s, deadline.remaining())
            if budget <= 0.05:
                break
            started = time.monotonic()
            log.info("driver.connect_attempt", endpoint=endpoint, attempt=attempt)
            browser, error, hung = await self._connect_once(endpoint, budget)
            if browser is not None:
                self._browser = browser
                self._health.connected()
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
        self._health.connect_failed(error, hung=hung)
        raise CdpUnreachable(
            f"Chrome is not reachable at {endpoint} ({error})", hint=_CDP_HINT, endpoint=endpoint
        )

    async def _connect_once(self, endpoint: str, budget: float) -> tuple[Browser | None, str, bool]:
        """Probe the HTTP endpoint (short timeout), then attach: (browser, error, hung).

        Playwright's driver (0.5-0.8 s to start) is started only once Chrome answers.
        """
        result = await probe(endpoint, min(PROBE_TIMEOUT_S, budget))
        if not result.ok:
            return None, result.error or "no answer", result.hung
        await self._replace_stuck_tab(endpoint, budget)
        if self._pw is None:
            with driver_node_options():  # a small V8 young generation: flat driver memory
                self._pw = await async_playwright().start()
        try:
            browser = await asyncio.wait_for(
                self._pw.chromium.connect_over_cdp(endpoint, timeout=budget * 1000), budget
            )
        except TimeoutError:
            return None, f"attaching took longer than {budget:.1f} s", True
        except PlaywrightError as exc:
            return None, _short(exc), classify_error(exc) is ErrorClass.TIMEOUT
        return browser, "", False

    async def _replace_stuck_tab(self, endpoint: str, budget: float) -> None:
        """Before attaching: a JS dialog left open on the owned tab (by a process that has
        exited, before a restart) or a busy loop would make the attach wait on that tab until
        it times out. Ask the tab to run `1`; when it cannot, close it over HTTP (a dialog
        cannot be answered over CDP from a session that was not there when it opened)."""
        if not self._target_id:
            return
        target_id = self._target_id
        try:
            tabs = await asyncio.to_thread(cdp_targets, endpoint, min(1.0, budget))
        except CdpUnreachable:
            return
        tab = next((t for t in tabs if t.get("id") == target_id), {})
        ws_url = tab.get("webSocketDebuggerUrl")
        if not ws_url:
            return
        if await asyncio.to_thread(tab_responds, ws_url, min(_STUCK_S, budget / 3)):
            return
        log.warning("driver.tab_stuck_replaced", target_id=target_id, url=str(tab.get("url"))[:200])
        await self._replace_over_http(endpoint, target_id)

    async def _replace_over_http(self, endpoint: str, target_id: str) -> None:
        """Open a blank tab, make it the owned one, then close `target_id` over HTTP (in this
        order: closing Chrome's last tab would end Chrome). The blank tab is a spare until
        our tab exists: if another tab ends up ours, it is closed again (`_close_spares`)."""
        self._page = None
        self._replaced.add(target_id)
        self._target_id = await self._spares.open(endpoint)  # None: the next step opens one
        self._save_target_id()
        with contextlib.suppress(TimeoutError, OSError):
            await asyncio.wait_for(asyncio.to_thread(close_target, endpoint, target_id), 2.0)

    async def _close_spares(self) -> None:
        """Our tab exists: close the blank tabs opened while replacing one that did not
        become it, so the tab strip shows ours alone (bounded; one it cannot close is left)."""
        if self._spares.empty:
            return
        keep = (self._target_id, self._load_target_id())  # ours, and another process's
        closed = await self._spares.close_all(self.settings.cdp_endpoint, keep)
        if closed:
            log.info("driver.spare_tabs_closed", target_ids=closed)

    async def _adopt_or_open(self) -> Page:
        assert self._browser is not None
        context = self._browser.contexts[0] if self._browser.contexts else None
        if context is None:
            raise CdpUnreachable(
                "the attached browser has no default context", endpoint=self.settings.cdp_endpoint
            )
        page = await self._find_owned(context) or await self._start_tab(context)
        if page is None:
            page = await context.new_page()
            self._target_id = await _target_id(context, page)
            self._save_target_id()
            log.info("driver.tab_opened", target_id=self._target_id)
        else:
            log.info("driver.tab_adopted", target_id=self._target_id)
        await self._close_spares()
        await self._prepare(page)
        self._page = page
        return page

    async def _start_tab(self, context: BrowserContext) -> Page | None:
        """The blank tab a Chrome started by `stream-browser chrome` opened: it becomes the
        owned tab, so that Chrome shows one tab, ours (a tab someone navigated is theirs).
        Without a record of it (a Chrome restarted some other way), a Chrome whose only tab
        is blank while the tab we owned is gone shows that tab: it becomes ours too."""
        chrome = load_state(self.settings.state_dir, self.settings.cdp_port)
        known = None if chrome is None or self.settings.cdp_url else chrome.start_target
        lone = self._target_id is not None and len(context.pages) == 1
        if not known and not lone:
            return None
        for page in context.pages:
            if page.url not in BLANK_URLS:
                continue
            with contextlib.suppress(PlaywrightError):
                target_id = await _target_id(context, page)
                if target_id in self._replaced or (target_id != known and not lone):
                    continue
                self._target_id = target_id
                self._save_target_id()
                log.info("driver.start_tab_adopted", target_id=target_id, recorded=bool(known))
                return page
        return None

    async def _find_owned(self, context: BrowserContext) -> Page | None:
        if not self._target_id:
            return None
        for attempt in range(2):
            for page in context.pages:
                try:
                    if await _target_id(context, page) == self._target_id:
                        return page
                except PlaywrightError:
                    continue
            if attempt == 0:  # a tab just opened over HTTP reaches Playwright a moment later
                await asyncio.sleep(0.2)
        return None

    async def _prepare(self, page: Page) -> None:
        page.on("dialog", _answer_dialog)
        page.on("popup", _close_popup)
        page.on("download", self._cancel_download)
        page.set_default_timeout(self.settings.nav_timeout_s * 1000)
        await prepare_page(page, self.settings)  # the clean screen (bounded, never raises)
        for hook in self.page_hooks:
            await hook(page)
        if self.page_hooks:
            # Registered last, so it runs before any hook's routes: a hook (a recording's
            # replay) never sees a request to an internal address, as Playwright's routes
            # see a request before the Fetch guard below can refuse it. Without hooks no
            # route is set: Playwright then intercepts nothing (no round trip per request,
            # no Request kept per route, and no sign-in challenge answered "let Chrome ask").
            await page.route(internal_request(self.settings.allow_hosts), self._guard_request)
        # Second layer behind the egress guard proxy: every document request and redirect hop,
        # and the frames, images, scripts and XHR to internal hosts of every tab, paused over
        # CDP and refused before they are sent, and every sign-in challenge cancelled (one
        # browser session per connection; no Playwright route: each request a route sees stays
        # alive in Playwright as a Request, Route and Response until the connection drops).
        await install_fetch_guard(page, self.settings.allow_hosts)

    async def _guard_request(self, route: Any) -> None:
        url = route.request.url
        if is_allowed(url, self.settings.allow_hosts):
            await route.fallback()
            return
        log.warning(
            "driver.request_blocked", url=url[:200], resource_type=route.request.resource_type
        )
        await route.abort("blockedbyclient")

    async def _recover_after_timeout(self) -> None:
        """A frozen Chrome and a wedged tab (busy loop, dialog storm) both look like a timeout.

        If Chrome's HTTP endpoint still answers, only our tab is stuck: close it over HTTP
        (works on a spinning renderer; reconnecting would hang attaching to it) and open a
        fresh one next time. Otherwise Chrome itself is frozen: forget the connection.
        """
        result = await probe(self.settings.cdp_endpoint, PROBE_TIMEOUT_S)
        if not result.ok:
            await self._chrome_unresponsive(result)
            return
        await self._close_wedged_tab()

    async def _chrome_unresponsive(self, result: ProbeResult) -> None:
        log.warning(
            "driver.chrome_unresponsive", endpoint=self.settings.cdp_endpoint, error=result.error
        )
        await self._drop()
        await self._health.lost("Chrome did not answer", result)

    async def _close_wedged_tab(self) -> None:
        """Close the owned tab over HTTP (works on a spinning renderer, where CDP commands and
        reattaching hang); the next step opens a fresh blank one."""
        endpoint = self.settings.cdp_endpoint
        target_id, self._page, self._target_id = self._target_id, None, None
        self._save_target_id()
        if target_id:
            log.warning("driver.tab_wedged_closed", target_id=target_id)
            await self._replace_over_http(endpoint, target_id)

    async def _drop(self) -> None:
        browser, self._browser = self._browser, None
        page, self._page = self._page, None
        if page is not None and not page.is_closed() and browser is not None:
            # Route handlers still running (a recording's, the guard's) would fail on the
            # closed connection and print "Task exception was never retrieved".
            with contextlib.suppress(TimeoutError, PlaywrightError):
                await asyncio.wait_for(page.unroute_all(behavior="ignoreErrors"), 1.0)
        if browser is not None:
            with contextlib.suppress(TimeoutError, PlaywrightError):
                await asyncio.wait_for(browser.close(), 1.0)

    # -- navigation details ---------------------------------------------------------------

    def _page_allowed(self, url: str) -> bool:
        if url in ("about:blank", "") or url.startswith("chrome-error://"):
            return True
        return is_allowed(url, self.settings.allow_hosts)

    def _check_redirects(self, response: Any, final_url: str) -> None:
        request = response.request.redirected_from if response else None
        while request is not None:
            if not self._page_allowed(request.url):
                raise BlockedUrl(
                    f"refused: a redirect went through {request.url[:200]}",
                    url=request.url[:200],
                    reason="redirect",
                )
            request = request.redirected_from

    async def _navigation_error(self, page: Page, url: str, exc: PlaywrightError) -> NavOutcome:
        kind = classify_error(exc)
        if kind is ErrorClass.DOWNLOAD or (
            kind is ErrorClass.ABORTED and await self._download_fired()
        ):
            # Chrome aborts a navigation that turned into a download (which we cancel).
            return NavOutcome(url=url, status=None, content_type="", download=True)
        if kind is ErrorClass.CLOSED:
            raise exc
        if not self.connected:  # Chrome went away mid-navigation (net::ERR_ABORTED)
            raise CdpUnreachable(
                f"lost the connection to Chrome at {self.settings.cdp_endpoint} while opening "
                f"{url[:200]}",
                hint=_CDP_HINT,
                endpoint=self.settings.cdp_endpoint,
            ) from exc
        if kind is ErrorClass.TIMEOUT:
            raise OperationTimeout(
                f"{url[:200]} did not load within {self.settings.nav_timeout_s:.0f} s"
            ) from exc
        raise NavigationFailed(f"could not open {url[:200]}: {_short(exc)}", url=url[:200]) from exc

    async def _download_fired(self) -> bool:
        """An aborted navigation is a download only if a download event really came."""
        for _ in range(10):
            if self._downloads:
                return True
            await asyncio.sleep(0.05)
        return False

    async def _cancel_download(self, download: Any) -> None:
        self._downloads += 1
        log.info("driver.download_cancelled", url=str(download.url)[:200])
        with contextlib.suppress(PlaywrightError):
            await download.cancel()

    # -- owned-tab memory across processes ------------------------------------------------

    def _state_path(self) -> Path:
        safe = "".join(c if c.isalnum() else "_" for c in self.settings.cdp_endpoint)
        return Path(self.settings.state_dir).expanduser() / f"owned-tab-{safe}.json"

    def _load_target_id(self) -> str | None:
        try:
            data = json.loads(self._state_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        value = data.get("target_id") if isinstance(data, dict) else None
        return str(value) if value else None

    def _save_target_id(self) -> None:
        path = self._state_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            partial.write_text(json.dumps({"target_id": self._target_id}), encoding="utf-8")
            os.replace(partial, path)  # readers never see half a file
        except OSError:
            log.warning("driver.state_not_saved", path=str(path))


def _waited(op: str, deadline: Deadline, holder: str) -> OperationTimeout:
    return OperationTimeout(
        f"{op}: waited {deadline.seconds:.1f} s for the broadcast tab, which {holder} was using",
        hint="retry, or raise SB_OP_TIMEOUT_S",
    )


_INTERRUPTED = "is interrupted by another navigation"  # Playwright 1.65's words, no type


def _same_document(a: str, b: str) -> bool:
    return urldefrag(a).url == urldefrag(b).url


async def _target_id(context: BrowserContext, page: Page) -> str:
    session = await context.new_cdp_session(page)
    try:
        info = await session.send("Target.getTargetInfo")
    finally:
        await session.detach()
    return str(info["targetInfo"]["targetId"])


async def _answer_dialog(dialog: Any) -> None:
    """Dismiss alerts, confirms and prompts; let `beforeunload` go (else we could never leave)."""
    leave = dialog.type == "beforeunload"
    log.info("driver.dialog_answered", dialog_type=dialog.type, accepted=leave)
    with contextlib.suppress(PlaywrightError):
        await (dialog.accept() if leave else dialog.dismiss())


async def _close_popup(popup: Page) -> None:
    log.info("driver.popup_closed", url=popup.url[:200])
    with contextlib.suppress(PlaywrightError):
        await popup.close()


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
