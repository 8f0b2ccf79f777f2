"""Navigation of the owned tab under the navigation policy: the address checked before it is
opened, `goto` (with "commit", the document's body taken from the network on the way:
`_early_body`), every redirect hop checked after, a capped settle, and what a failed `goto`
means (a download, a lost connection, a timeout, a page that cannot be opened).

Never an unbounded networkidle: a page whose images or trackers never finish would otherwise
cost the whole settle cap on every read.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urldefrag

import structlog
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from .._errors import BlockedUrl, CdpUnreachable, NavigationFailed, OperationTimeout
from .._settings import Settings
from ..safety._policy import check_url, is_allowed
from ._connection import CDP_HINT, Connection
from ._document import STILL_S, Commits
from ._early_body import EarlyBody, armed
from ._page_guards import Downloads
from ._playwright_errors import ErrorClass, classify_error, short

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
        return is_html_type(self.content_type)


def is_html_type(content_type: str) -> bool:
    """Whether a response of this Content-Type is a page to read (none said counts as one)."""
    return not content_type or "html" in content_type or "xml" in content_type


class Navigation:
    """Opens addresses in a page under the policy; `connection` tells a failed `goto` that
    lost Chrome from one that failed on its own, `downloads` one that became a download."""

    def __init__(self, settings: Settings, connection: Connection, downloads: Downloads) -> None:
        self.settings = settings
        self._connection = connection
        self._downloads = downloads

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
        """Open `url` in `page` under the navigation policy; wait for DOM plus a capped settle.

        With `wait_until="commit"` it returns as soon as the response starts (no settle), so a
        caller can parse `outcome.response` while the page keeps painting for viewers. With
        `from_blank`, the page is first given a blank document that stays (`_still`): for a
        page that went on moving where ours should be (`document_html`'s `reopen`).
        """
        if check:
            url = await self.check(url)
        if from_blank:
            log.info("driver.goto_from_blank", url=url[:200], was=page.url[:200])
            await _still(page)
        nav_ms = (timeout or self.settings.nav_timeout_s) * 1000
        self._downloads.reset()
        try:
            response, early = await self._goto(page, url, wait_until, nav_ms)
        except PlaywrightError as exc:
            return await self._navigation_error(url, exc)
        outcome = NavOutcome(
            url=page.url,
            status=response.status if response else None,
            content_type=(response.headers.get("content-type", "") if response else ""),
            response=response,
            body=early.text if early is not None and _same_document(early.url, page.url) else None,
        )
        self._check_redirects(response)
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
        """`page.goto` (see `_goto_once`). A navigation of ours that another one beat to the
        commit (a tab a person left moving itself on, a meta-refresh ping-pong, whose next
        document came in before ours and moved on again) is made once more from a blank
        document, where nothing moves the page on; interrupted again, where it went is read
        (as a script redirect of our own document, which the second try meets again)."""
        started = time.monotonic()
        with Commits(page) as commits:
            try:
                return await self._goto_once(page, url, wait_until, nav_ms, last=False)
            except PlaywrightError as exc:
                if not await self._beaten(exc, commits, url):
                    raise
                log.info("driver.goto_beaten", url=url[:200], error=short(exc))
        await _still(page)
        self._downloads.reset()  # only a download of the second try makes ours one
        left_ms = nav_ms - (time.monotonic() - started) * 1000
        return await self._goto_once(page, url, wait_until, max(left_ms, 1000), last=True)

    async def _beaten(self, exc: PlaywrightError, commits: Commits, url: str) -> bool:
        """Whether another navigation beat ours: Playwright says so ("interrupted by another
        navigation"); or Chrome aborted ours (net::ERR_ABORTED) and either the only downloads
        that came were of other addresses (the page that was there went on to a file on a
        timer of its own: the next read was called "a file download"), or no download came
        and another document committed in the page meanwhile (a 204 commits nothing; the
        commit's event can come after the abort, so it is looked at after the download's
        wait). A download of an address ours redirected to is tried once more, and is one."""
        kind = classify_error(exc)
        if kind is ErrorClass.MOVED:
            return True
        if kind is not ErrorClass.ABORTED or not self._connection.connected:
            return False  # Chrome going away aborts a navigation too
        if await self._downloads.fired():
            return self._downloads.only_of_others(url)
        if not commits.count:
            await asyncio.sleep(0.1)
        return commits.count > 0

    async def _goto_once(
        self, page: Page, url: str, wait_until: WaitUntil, nav_ms: float, *, last: bool
    ) -> tuple[Any, EarlyBody | None]:
        """`page.goto`; with "commit", the document's body is taken from the network on the
        way (`_early_body`), and a body too slow for that is opened again the usual way. The
        `last` try reads where an interrupted navigation went (not `last`: it raises)."""
        if wait_until != "commit":
            return await page.goto(url, wait_until=wait_until, timeout=nav_ms), None
        started = time.monotonic()
        async with armed(page, await self._connection.cdp_channel()) as arming:
            try:
                response = await page.goto(url, wait_until=wait_until, timeout=nav_ms)
            except PlaywrightError as exc:
                first = arming.body.result() if arming.body.done() else None
                if last and first is not None and classify_error(exc) is ErrorClass.MOVED:
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

    # -- where it went, and what a failure means ---------------------------------------------

    def _page_allowed(self, url: str) -> bool:
        if url in ("about:blank", "") or url.startswith("chrome-error://"):
            return True
        return is_allowed(url, self.settings.allow_hosts)

    def _check_redirects(self, response: Any) -> None:
        request = response.request.redirected_from if response else None
        while request is not None:
            if not self._page_allowed(request.url):
                raise BlockedUrl(
                    f"refused: a redirect went through {request.url[:200]}",
                    url=request.url[:200],
                    reason="redirect",
                )
            request = request.redirected_from

    async def _navigation_error(self, url: str, exc: PlaywrightError) -> NavOutcome:
        kind = classify_error(exc)
        if kind is ErrorClass.DOWNLOAD or (
            kind is ErrorClass.ABORTED and await self._downloads.fired()
        ):
            # Chrome aborts a navigation that turned into a download (which we cancel).
            return NavOutcome(url=url, status=None, content_type="", download=True)
        if kind is ErrorClass.CLOSED:
            raise exc
        endpoint = self.settings.cdp_endpoint
        if not self._connection.connected:  # Chrome went away mid-navigation (net::ERR_ABORTED)
            raise CdpUnreachable(
                f"lost the connection to Chrome at {endpoint} while opening {url[:200]}",
                hint=CDP_HINT,
                endpoint=endpoint,
            ) from exc
        if kind is ErrorClass.TIMEOUT:
            raise OperationTimeout(
                f"{url[:200]} did not load within {self.settings.nav_timeout_s:.0f} s"
            ) from exc
        raise NavigationFailed(f"could not open {url[:200]}: {short(exc)}", url=url[:200]) from exc


async def _still(page: Page, quiet_s: float = STILL_S, within_s: float = 4.0) -> None:
    """A blank document in `page` that stays: no document commits in it for `quiet_s` after.

    Checking the address is not enough: a navigation Playwright called "interrupted by
    another" can still commit afterwards, and a late blank one has the same address as ours
    (measured: a meta-refresh ping-pong left by a person, then `goto(about:blank)` twice;
    the first blank committed after the second, and interrupted the goto that followed).
    Bounded by `within_s`: a page that never stops is left to the goto after it.
    """
    with Commits(page) as commits:
        until = time.monotonic() + within_s
        while time.monotonic() < until:
            if page.url != NEUTRAL_URL:
                with contextlib.suppress(PlaywrightError):
                    await page.goto(NEUTRAL_URL, timeout=3000)
            seen = commits.count
            await asyncio.sleep(quiet_s)
            if commits.count == seen and page.url == NEUTRAL_URL:
                return


def _same_document(a: str, b: str) -> bool:
    return urldefrag(a).url == urldefrag(b).url
