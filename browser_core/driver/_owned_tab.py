"""The one tab the driver owns: found again by its saved target id, adopted (the blank tab a
Chrome we started opened), or opened; replaced over HTTP when it is stuck or wedged.

Failure modes it guards against: tabs piling up (one owned tab; the blank spares opened while
replacing one are closed again once ours exists; other tabs are never touched); a tab held by
a JS dialog or a busy loop (`while(true)`), on which attaching or any CDP command would hang:
it is asked to run `1` (over raw CDP before attaching, over Playwright after), and when it
cannot it is closed over HTTP, which works on a spinning renderer, after a blank tab was
opened (closing Chrome's last tab would end Chrome).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog
from playwright.async_api import Browser, BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from .._cdp_raw import tab_responds
from .._errors import CdpUnreachable
from .._settings import Settings
from ..chrome import cdp_targets, load_state
from ._close import close_page, close_target_for_good
from ._playwright_errors import is_closed_error
from ._spare_tabs import BLANK_URLS, SpareTabs
from ._tab_record import TabRecord

PageHook = Callable[[Page], Awaitable[None]]
log = structlog.get_logger("browser_core.driver")

# A tab whose page does not run `1` within this is wedged (a busy loop): it is replaced.
_RESPONSIVE_S = 1.0
# Before attaching, a tab that does not run `1` over raw CDP within this (a few ms when it
# is fine) is held by a JS dialog or a busy loop: it is replaced.
_STUCK_S = 1.0


class OwnedTab:
    """The owned tab: its target id (kept in `record` across processes) and, while attached,
    its `page`. `prepare` is what every page gets once it becomes ours (`PageGuards`)."""

    def __init__(self, settings: Settings, record: TabRecord, prepare: PageHook) -> None:
        self.settings = settings
        self.record = record
        self.page: Page | None = None
        self.target_id: str | None = record.load()
        self._prepare = prepare
        self._replaced: set[str] = set()  # tabs closed as stuck: never adopted again
        self._spares = SpareTabs()  # blank tabs opened over HTTP while replacing one

    @property
    def url(self) -> str | None:
        """What the owned tab shows, without a CDP call (None before it was attached)."""
        page = self.page
        return None if page is None or page.is_closed() else page.url

    def let_go(self) -> Page | None:
        """Forget the page (its connection is being dropped); the target id stays: the next
        connection finds the same tab again. The page that was ours, if any."""
        page, self.page = self.page, None
        return page

    def follow_elsewhere(self) -> None:
        """Under the file lock: adopt the owned tab another process opened or replaced."""
        stored = self.record.load()
        if stored == self.target_id:
            return
        if stored is None:
            self._save()  # the state file was lost: ours is still the owned tab
            return
        log.info("driver.tab_changed_elsewhere", target_id=stored, was=self.target_id)
        self.target_id, self.page = stored, None

    # -- finding, adopting, opening ----------------------------------------------------------

    async def adopt_or_open(self, browser: Browser | None) -> Page:
        """The owned tab's page on `browser`: found by its id, the start tab adopted, or a
        new tab opened; prepared, and the spares closed."""
        assert browser is not None
        context = browser.contexts[0] if browser.contexts else None
        if context is None:
            raise CdpUnreachable(
                "the attached browser has no default context", endpoint=self.settings.cdp_endpoint
            )
        page = await self._find_owned(context) or await self._start_tab(context)
        if page is None:
            page = await context.new_page()
            self.target_id = await _target_id(context, page)
            self._save()
            log.info("driver.tab_opened", target_id=self.target_id)
        else:
            log.info("driver.tab_adopted", target_id=self.target_id)
        await self._close_spares()
        await self._prepare(page)
        self.page = page
        return page

    async def _start_tab(self, context: BrowserContext) -> Page | None:
        """The blank tab a Chrome started by `stream-browser chrome` opened: it becomes the
        owned tab, so that Chrome shows one tab, ours (a tab someone navigated is theirs).
        Without a record of it (a Chrome restarted some other way), a Chrome whose only tab
        is blank while the tab we owned is gone shows that tab: it becomes ours too."""
        chrome = load_state(self.settings.state_dir, self.settings.cdp_port)
        known = None if chrome is None or self.settings.cdp_url else chrome.start_target
        lone = self.target_id is not None and len(context.pages) == 1
        if not known and not lone:
            return None
        for page in context.pages:
            if page.url not in BLANK_URLS:
                continue
            with contextlib.suppress(PlaywrightError):
                target_id = await _target_id(context, page)
                if target_id in self._replaced or (target_id != known and not lone):
                    continue
                self.target_id = target_id
                self._save()
                log.info("driver.start_tab_adopted", target_id=target_id, recorded=bool(known))
                return page
        return None

    async def _find_owned(self, context: BrowserContext) -> Page | None:
        if not self.target_id:
            return None
        for attempt in range(2):
            for page in context.pages:
                try:
                    if await _target_id(context, page) == self.target_id:
                        return page
                except PlaywrightError:
                    continue
            if attempt == 0:  # a tab just opened over HTTP reaches Playwright a moment later
                await asyncio.sleep(0.2)
        return None

    # -- stuck and wedged tabs -----------------------------------------------------------------

    @staticmethod
    async def responsive(page: Page) -> bool:
        """Does the page run a script at once? A busy loop (`while(true)`) never lets it."""
        try:
            await asyncio.wait_for(page.evaluate("1"), _RESPONSIVE_S)
        except TimeoutError:
            return False
        except PlaywrightError as exc:
            if is_closed_error(exc):
                raise
        return True

    async def replace_if_stuck(self, endpoint: str, budget: float) -> None:
        """Before attaching: a JS dialog left open on the owned tab (by a process that has
        exited, before a restart) or a busy loop would make the attach wait on that tab until
        it times out. Ask the tab to run `1`; when it cannot, close it over HTTP (a dialog
        cannot be answered over CDP from a session that was not there when it opened)."""
        if not self.target_id:
            return
        target_id = self.target_id
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

    async def close_wedged(self) -> None:
        """Close the owned tab over HTTP (works on a spinning renderer, where CDP commands and
        reattaching hang); the next step opens a fresh blank one."""
        endpoint = self.settings.cdp_endpoint
        target_id, self.page, self.target_id = self.target_id, None, None
        self._save()
        if target_id:
            log.warning("driver.tab_wedged_closed", target_id=target_id)
            await self._replace_over_http(endpoint, target_id)

    async def _replace_over_http(self, endpoint: str, target_id: str) -> None:
        """Open a blank tab, make it the owned one, then close `target_id` over HTTP (in this
        order: closing Chrome's last tab would end Chrome). The blank tab is a spare until
        our tab exists: if another tab ends up ours, it is closed again (`_close_spares`)."""
        self.page = None
        self._replaced.add(target_id)
        self.target_id = await self._spares.open(endpoint)  # None: the next step opens one
        self._save()
        await close_target_for_good(endpoint, target_id, 2.0)  # also one that keeps moving

    async def _close_spares(self) -> None:
        """Our tab exists: close the blank tabs opened while replacing one that did not
        become it, so the tab strip shows ours alone (bounded; one it cannot close is left)."""
        if self._spares.empty:
            return
        keep = (self.target_id, self.record.load())  # ours, and another process's
        closed = await self._spares.close_all(self.settings.cdp_endpoint, keep)
        if closed:
            log.info("driver.spare_tabs_closed", target_ids=closed)

    # -- closing ---------------------------------------------------------------------------------

    async def close(self) -> None:
        """Close the tab (under the caller's file lock) and forget it, here and in the record
        unless another process has replaced it meanwhile."""
        page, self.page = self.page, None
        if page is not None and not page.is_closed():
            await close_page(page, 5.0)  # also a page that keeps navigating
        if self.record.load() in (self.target_id, None):  # not replaced elsewhere
            self.target_id = None
            self._save()
        self.target_id = None

    def _save(self) -> None:
        self.record.save(self.target_id)


async def _target_id(context: BrowserContext, page: Page) -> str:
    session = await context.new_cdp_session(page)
    try:
        info = await session.send("Target.getTargetInfo")
    finally:
        await session.detach()
    return str(info["targetInfo"]["targetId"])
