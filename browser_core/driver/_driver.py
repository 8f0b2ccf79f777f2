"""The driver the tool calls: one attached Chrome, one owned tab, operations one at a time.

A short orchestration over its rooms: the turn (`_turn`: whose turn, the stage's hold after
the answer), the connection (`_connection`: attach, reconnect, recycle, health), the owned
tab (`_owned_tab`: find, adopt, open, replace when stuck or wedged), what every owned page
gets (`_page_guards`), navigation (`_navigation`) and recovery after a failure (`_recovery`).

Health API (for the service's `/v1/status`, `/readyz` and `/metrics`): `driver.health` is a
`ChromeHealth` snapshot, safe to read from any thread: `state` ("up" | "down" | "unknown"),
`since` (Unix time of the last change), `last_error`, `reconnects` (successful connects after
the first), `connect_failures`, `hung` (the last failure was a timeout), `connected`,
`probing` (the background probe is running); `.as_dict()` gives them as JSON-ready fields.
Ready means `state != "down"`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import structlog
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from .._errors import BlockedUrl, CdpUnreachable, OperationTimeout, ProviderError
from .._settings import Settings
from ..stage._focus import drain as drain_stage
from ..stage._screen import after_op
from ._connection import Connection
from ._deadline import Deadline
from ._health import ChromeHealth
from ._hold import ScreenHold
from ._navigation import Navigation, NavOutcome, WaitUntil
from ._owned_tab import OwnedTab, PageHook
from ._page_guards import Downloads, PageGuards
from ._peek import Guarded, Peeked, peek
from ._recovery import Recovery
from ._tab_record import TabRecord, record_path
from ._turn import STAGE_HOLD_S, Turn

T = TypeVar("T")
# What the stage shows after an operation's answer is handed back: `show(page, answer)`.
Show = Callable[[Page, T], Awaitable[Any]]
log = structlog.get_logger("browser_core.driver")


class Driver:
    """One attached Chrome and one owned tab. Async; see `SyncDriver` for threads."""

    def __init__(self, settings: Settings, *, page_hooks: tuple[PageHook, ...] = ()) -> None:
        self.page_hooks: list[PageHook] = list(page_hooks)
        record = TabRecord(record_path(settings))
        downloads = Downloads()
        self._turn = Turn(record.path.with_suffix(".lock"))
        self._connection = Connection(settings)
        self._guards = PageGuards(settings, self.page_hooks, downloads)
        self._tab = OwnedTab(settings, record, self._guards.prepare)
        self._navigation = Navigation(settings, self._connection, downloads)
        self._recovery = Recovery(settings, self._connection, self._tab)
        self._settings = settings
        self._guarded = Guarded()
        # A person holding the screen from the console: calls are refused while it lasts.
        self.hold = ScreenHold(settings.screen_idle_s)
        # Who else waits for the tab besides this process's line (the service adds its queue):
        # the show after an answer yields to them too.
        self.waiting_sources = self._turn.waiting_sources

    @property
    def settings(self) -> Settings:
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        """Settings swapped on the driver reach every room (the next call uses them)."""
        self._settings = settings
        for room in (self._connection, self._guards, self._tab, self._navigation, self._recovery):
            room.settings = settings
        self.hold.idle_s = settings.screen_idle_s

    # -- public ---------------------------------------------------------------------------

    async def run(
        self,
        op: str,
        fn: Callable[[Page], Awaitable[T]],
        *,
        timeout: float | None = None,
        show: Show[T] | None = None,
        by: str | None = None,
    ) -> T:
        """Run `fn(page)` on the owned tab when it is our turn, within the deadline.

        The answer is handed back as soon as `fn` has it. What the stage does for viewers
        after it (`show(page, answer)`, then the quiet page and the driver's housekeeping)
        follows on the same tab, holding it for at most `STAGE_HOLD_S`, so the next call
        waits at most for what is left of it. While Chrome is known to be down this fails
        at once with `CdpUnreachable`. While a person holds the screen (`hold`) it waits at
        most `SB_SCREEN_WAIT_S`, then fails with `ScreenHeld`, unless `by` is that person.
        """
        deadline = Deadline(timeout if timeout is not None else self.settings.op_timeout_s)
        bound = log.bind(op=op)
        try:
            await self._connection.refuse_if_down(op)
            wait_s = min(self.settings.screen_wait_s, deadline.remaining())
            await self.hold.free(by, wait_s, asyncio.sleep)
            self.hold.check(by)
            await self._take_turn(op, deadline)
        except ProviderError as exc:
            bound.warning(
                "driver.op_failed",
                failure_kind=exc.kind,
                waited=isinstance(exc, OperationTimeout),
                chrome=self._connection.health.snapshot().state,
                elapsed_ms=deadline.elapsed_ms(),
                error=str(exc)[:300],
            )
            raise
        handed_over = False
        try:
            self.hold.check(by)  # taken while this call waited for its turn
            await self._connection.refuse_if_down(op)
            page, result = await self._run_locked(op, fn, deadline)
            self._turn.hand_over(op, self._after_answer(op, page, result, show))
            handed_over = True  # the turn is released when the stage's step is done
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
                self._turn.release()
        bound.info("driver.op", elapsed_ms=deadline.elapsed_ms())
        return result

    async def stage_done(self, timeout: float = STAGE_HOLD_S + 1.0) -> None:
        """Wait (at most `timeout`) until the stage's work after the last answer is done and
        the tab is free: for a one-shot command before it exits, and for tests that look at
        the screen."""
        await self._turn.done(timeout)

    async def take_screen(self, owner: str, name: str, timeout: float) -> Page:
        """Hold the screen for a person, on the tab's turn (between calls): the owned tab,
        attached and in front. `ScreenHeld` when someone else holds it."""

        async def claim(page: Page) -> Page:
            self.hold.take(owner, name)
            return page

        return await self.run("console.take", claim, timeout=timeout, by=owner)

    @property
    def health(self) -> ChromeHealth:
        """What the driver knows about Chrome (see the module docstring); any thread."""
        return self._connection.health.snapshot(connected=self.connected)

    async def navigate(
        self,
        page: Page,
        url: str,
        *,
        timeout: float | None = None,
        settle_ms: int | None = None,
        check: bool = True,
        wait_until: WaitUntil = "domcontentloaded",
        from_blank: bool = False,
    ) -> NavOutcome:
        """Open `url` in `page` under the navigation policy; see `Navigation.navigate`."""
        return await self._navigation.navigate(
            page,
            url,
            timeout=timeout,
            settle_ms=settle_ms,
            check=check,
            wait_until=wait_until,
            from_blank=from_blank,
        )

    async def settle(self, page: Page, settle_ms: int | None = None) -> None:
        """Wait until `load`, or until the page's text stops changing, within the settle cap."""
        await self._navigation.settle(page, settle_ms)

    async def check(self, url: str) -> str:
        """Apply the navigation policy (DNS lookups run off the event loop)."""
        return await self._navigation.check(url)

    async def peek(self, page: Page, url: str, timeout: float) -> Peeked:
        """`url` fetched by Chrome beside what `page` shows, never drawn (for a choice the
        stream need not watch): under the navigation policy, and only behind the egress guard,
        which alone checks its redirect hops (`_peek`). `Peeked.error` says why there is no
        body."""
        try:
            url = await self.check(url)
        except BlockedUrl as exc:
            return Peeked(url[:200], error=f"refused: {exc}")
        if not await self._guarded(self.settings):
            return Peeked(url, error="Chrome does not run behind the egress guard")
        return await peek(page, url, timeout)

    async def close(self) -> None:
        """Drop the connection (Chrome and its tabs stay up) and stop Playwright."""
        await self.stage_done()
        await drain_stage(1.0)  # a mark the stage is still making on the tab (one-shot CLI)
        await self._connection.close(self._tab.let_go())
        self._turn.close()

    async def close_owned_tab(self) -> None:
        """Close the tab we opened (used by tests and `stream-browser chrome --stop`)."""
        await self.stage_done()
        async with self._turn.across_processes(5.0):
            await self._tab.close()

    @property
    def connected(self) -> bool:
        return self._connection.connected

    @property
    def owned_target(self) -> str | None:
        """The owned tab's CDP target id (None before the first operation), for observers
        that look at the screen over their own CDP socket (the console's frames)."""
        return self._tab.target_id

    @property
    def owned_url(self) -> str | None:
        """What the owned tab shows, without a CDP call (None before the first operation)."""
        return self._tab.url

    # -- one operation ----------------------------------------------------------------------

    async def _take_turn(self, op: str, deadline: Deadline) -> None:
        """Our turn on the tab, then, under the file lock, the tab another process owns now."""
        await self._turn.take(op, deadline)
        self._tab.follow_elsewhere()

    async def _run_locked(
        self, op: str, fn: Callable[[Page], Awaitable[T]], deadline: Deadline
    ) -> tuple[Page, T]:
        try:
            page = await asyncio.wait_for(self._owned_page(deadline), deadline.remaining())
            result = await asyncio.wait_for(fn(page), deadline.remaining())
            return page, result
        except TimeoutError:
            if self.connected:  # else the time went in attaching: no tab to blame
                await self._recovery.after_timeout()
            raise OperationTimeout(
                f"{op} did not finish within {deadline.seconds:.1f} s",
                hint="the page or Chrome is not responding",
            ) from None
        except CdpUnreachable:
            await self._recovery.after_unreachable(op)
            raise
        except PlaywrightError as exc:
            await self._recovery.after_error(op, exc)

    async def _owned_page(self, deadline: Deadline) -> Page:
        """The owned tab, attached, responsive and in front."""
        if not self.connected:
            await self._connection.drop(self._tab.let_go())
            await self._connection.connect(deadline, self._tab.replace_if_stuck)
        page = self._tab.page
        if page is None or page.is_closed():
            page = await self._tab.adopt_or_open(self._connection.browser)
        if not await self._tab.responsive(page):
            await self._recovery.replace_wedged_tab()
            page = await self._tab.adopt_or_open(self._connection.browser)
        await page.bring_to_front()
        return page

    async def _after_answer(self, op: str, page: Page, result: Any, show: Show[Any] | None) -> None:
        """The show after the answer, on the tab still ours: the stage's marks (bounded by
        the turn's hold), the page made quiet, the connection recycled now and then. Never
        raises."""
        try:
            if show is not None:
                await self._turn.hold(op, show(page, result))
            await after_op(page, op)  # no sound after the call but the player's (bounded)
            if self._connection.count_op(busy=self._turn.someone_waits()):
                await self._connection.recycle(self._tab.let_go())
        except Exception as exc:  # a gone page or Chrome: the next call finds out
            log.info("driver.after_answer_failed", op=op, error=str(exc)[:200])
