"""The CDP driver: attach to the broadcast Chrome, own one tab, run operations one at a time.

Failure modes it guards against: a frozen Chrome never reports a disconnect (every CDP call
has an explicit deadline, and a timed-out connection is dropped so the next call reconnects);
a restarted Chrome (transparent reconnect with bounded tries and backoff); two callers
driving the one visible tab at once (a FIFO lock whose wait counts against the deadline);
tabs piling up (one owned tab, popups it opens are closed, other tabs are never touched).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import structlog
from playwright.async_api import Browser, BrowserContext, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from ._chrome import cdp_version, close_target
from ._errors import (
    BlockedUrl,
    CdpUnreachable,
    FailureKind,
    NavigationFailed,
    OperationTimeout,
    ProviderError,
)
from ._fetch_guard import install_fetch_guard
from ._policy import INTERNAL_REQUEST, check_url, is_allowed
from ._settings import Settings

T = TypeVar("T")
PageHook = Callable[[Page], Awaitable[None]]
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

    @property
    def is_html(self) -> bool:
        return not self.content_type or "html" in self.content_type or "xml" in self.content_type


def _is_closed_error(exc: BaseException) -> bool:
    text = f"{getattr(exc, 'name', '')} {exc}"
    return any(
        word in text
        for word in (
            "TargetClosed",
            "has been closed",
            "disconnected",
            "Connection closed",
            "Browser closed",
        )
    )


class Driver:
    """One attached Chrome and one owned tab. Async; see `SyncDriver` for threads."""

    def __init__(self, settings: Settings, *, page_hooks: tuple[PageHook, ...] = ()) -> None:
        self.settings = settings
        self.page_hooks: list[PageHook] = list(page_hooks)
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._page: Page | None = None
        self._target_id: str | None = self._load_target_id()
        self._lock = asyncio.Lock()
        self._closed = False
        self._downloads = 0

    # -- public ---------------------------------------------------------------------------

    async def run(
        self, op: str, fn: Callable[[Page], Awaitable[T]], *, timeout: float | None = None
    ) -> T:
        """Run `fn(page)` on the owned tab when it is our turn, within the deadline."""
        deadline = Deadline(timeout if timeout is not None else self.settings.op_timeout_s)
        bound = log.bind(op=op)
        try:
            await asyncio.wait_for(self._lock.acquire(), deadline.remaining())
        except TimeoutError:
            bound.warning(
                "driver.op_failed",
                failure_kind=FailureKind.TIMEOUT,
                waited=True,
                elapsed_ms=deadline.elapsed_ms(),
            )
            raise OperationTimeout(
                f"{op}: waited {deadline.seconds:.1f} s for the broadcast tab, which another "
                "operation was using",
                hint="retry, or raise SB_OP_TIMEOUT_S",
            ) from None
        try:
            result = await self._run_locked(op, fn, deadline)
        except ProviderError as exc:
            bound.warning(
                "driver.op_failed",
                failure_kind=exc.kind,
                elapsed_ms=deadline.elapsed_ms(),
                error=str(exc)[:300],
            )
            raise
        finally:
            self._lock.release()
        bound.info("driver.op", elapsed_ms=deadline.elapsed_ms())
        return result

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
            response = await page.goto(url, wait_until=wait_until, timeout=nav_ms)
        except PlaywrightError as exc:
            return await self._navigation_error(page, url, exc)
        outcome = NavOutcome(
            url=page.url,
            status=response.status if response else None,
            content_type=(response.headers.get("content-type", "") if response else ""),
            response=response,
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
        self._closed = True
        await self._drop()
        if self._pw is not None:
            pw, self._pw = self._pw, None
            with contextlib.suppress(TimeoutError, PlaywrightError):
                await asyncio.wait_for(pw.stop(), 5)

    async def close_owned_tab(self) -> None:
        """Close the tab we opened (used by tests and `stream-browser chrome --stop`)."""
        page, self._page = self._page, None
        if page is not None and not page.is_closed():
            with contextlib.suppress(TimeoutError, PlaywrightError):
                await asyncio.wait_for(page.close(), 5)
        self._target_id = None
        self._save_target_id()

    @property
    def connected(self) -> bool:
        return self._browser is not None and self._browser.is_connected()

    @property
    def owned_url(self) -> str | None:
        """What the owned tab shows, without a CDP call (None before the first operation)."""
        page = self._page
        return None if page is None or page.is_closed() else page.url

    # -- the locked part ------------------------------------------------------------------

    async def _run_locked(
        self, op: str, fn: Callable[[Page], Awaitable[T]], deadline: Deadline
    ) -> T:
        try:
            page = await asyncio.wait_for(self._owned_page(deadline), deadline.remaining())
            return await asyncio.wait_for(fn(page), deadline.remaining())
        except TimeoutError:
            await self._recover_after_timeout()
            raise OperationTimeout(
                f"{op} did not finish within {deadline.seconds:.1f} s",
                hint="the page or Chrome is not responding",
            ) from None
        except PlaywrightError as exc:
            if _is_closed_error(exc) or not self.connected:
                await self._drop()
                raise CdpUnreachable(
                    f"{op}: lost the connection to Chrome at {self.settings.cdp_endpoint}",
                    hint=_CDP_HINT,
                    endpoint=self.settings.cdp_endpoint,
                ) from exc
            raise NavigationFailed(f"{op}: {_short(exc)}") from exc

    async def _owned_page(self, deadline: Deadline) -> Page:
        if not self.connected:
            await self._connect(deadline)
        page = self._page
        if page is None or page.is_closed():
            page = await self._adopt_or_open()
        await page.bring_to_front()
        return page

    async def _connect(self, deadline: Deadline) -> None:
        if self._closed:
            raise CdpUnreachable("the driver was closed", endpoint=self.settings.cdp_endpoint)
        await self._drop()
        if self._pw is None:
            self._pw = await async_playwright().start()
        endpoint = self.settings.cdp_endpoint  # re-resolved on every connect
        delay, last_exc = 0.2, None
        for attempt in range(1, self.settings.connect_attempts + 1):
            budget = min(self.settings.connect_timeout_s, deadline.remaining())
            if budget <= 0.05:
                break
            started = time.monotonic()
            try:
                browser = await asyncio.wait_for(
                    self._pw.chromium.connect_over_cdp(endpoint, timeout=budget * 1000), budget
                )
            except (TimeoutError, PlaywrightError) as exc:
                last_exc = exc
                log.info(
                    "driver.connect_failed", endpoint=endpoint, attempt=attempt, error=_short(exc)
                )
                await asyncio.sleep(min(delay, deadline.remaining()))
                delay *= 2.5
                continue
            self._browser = browser
            log.info(
                "driver.connected",
                endpoint=endpoint,
                attempt=attempt,
                elapsed_ms=int((time.monotonic() - started) * 1000),
            )
            return
        raise CdpUnreachable(
            f"Chrome is not reachable at {endpoint}", hint=_CDP_HINT, endpoint=endpoint
        ) from last_exc

    async def _adopt_or_open(self) -> Page:
        assert self._browser is not None
        context = self._browser.contexts[0] if self._browser.contexts else None
        if context is None:
            raise CdpUnreachable(
                "the attached browser has no default context", endpoint=self.settings.cdp_endpoint
            )
        page = await self._find_owned(context)
        if page is None:
            page = await context.new_page()
            self._target_id = await _target_id(context, page)
            self._save_target_id()
            log.info("driver.tab_opened", target_id=self._target_id)
        else:
            log.info("driver.tab_adopted", target_id=self._target_id)
        await self._prepare(page)
        self._page = page
        return page

    async def _find_owned(self, context: BrowserContext) -> Page | None:
        if not self._target_id:
            return None
        for page in context.pages:
            try:
                if await _target_id(context, page) == self._target_id:
                    return page
            except PlaywrightError:
                continue
        return None

    async def _prepare(self, page: Page) -> None:
        page.on("dialog", _answer_dialog)
        page.on("popup", _close_popup)
        page.on("download", self._cancel_download)
        page.set_default_timeout(self.settings.nav_timeout_s * 1000)
        for hook in self.page_hooks:
            await hook(page)
        # Registered last, so it runs before any hook's routes: a public page must not
        # show (or probe) an internal service through a frame, image or script either.
        await page.route(INTERNAL_REQUEST, self._guard_request)
        # Second layer behind the egress guard proxy: sees redirect hops before they are sent.
        await install_fetch_guard(page.context, page, self.settings.allow_hosts)

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
        endpoint = self.settings.cdp_endpoint
        try:
            await asyncio.wait_for(asyncio.to_thread(cdp_version, endpoint, 1.0), 1.5)
        except (TimeoutError, CdpUnreachable):
            log.warning("driver.chrome_unresponsive", endpoint=endpoint)
            await self._drop()
            return
        target_id, self._page, self._target_id = self._target_id, None, None
        self._save_target_id()
        if target_id:
            log.warning("driver.tab_wedged_closed", target_id=target_id)
            with contextlib.suppress(TimeoutError, OSError):
                await asyncio.wait_for(asyncio.to_thread(close_target, endpoint, target_id), 2.0)

    async def _drop(self) -> None:
        browser, self._browser, self._page = self._browser, None, None
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
        text = str(exc)
        if "Download is starting" in text or await self._download_fired(text):
            # Chrome aborts a navigation that turned into a download (which we cancel).
            return NavOutcome(url=url, status=None, content_type="", download=True)
        if _is_closed_error(exc):
            raise exc
        if not self.connected:  # Chrome went away mid-navigation (net::ERR_ABORTED)
            raise CdpUnreachable(
                f"lost the connection to Chrome at {self.settings.cdp_endpoint} while opening "
                f"{url[:200]}",
                hint=_CDP_HINT,
                endpoint=self.settings.cdp_endpoint,
            ) from exc
        if "Timeout" in text:
            raise OperationTimeout(
                f"{url[:200]} did not load within {self.settings.nav_timeout_s:.0f} s"
            ) from exc
        raise NavigationFailed(f"could not open {url[:200]}: {_short(exc)}", url=url[:200]) from exc

    async def _download_fired(self, text: str) -> bool:
        """An aborted navigation is a download only if a download event really came."""
        if "net::ERR_ABORTED" not in text:
            return False
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
            path.write_text(json.dumps({"target_id": self._target_id}), encoding="utf-8")
        except OSError:
            log.warning("driver.state_not_saved", path=str(path))


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
