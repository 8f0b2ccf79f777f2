"""What every page the driver owns gets once it becomes ours: its JS dialogs answered, the
popups it opens closed, its downloads cancelled, the stage's clean screen, the page hooks (a
recording's replay), a route refusing requests to internal addresses before a hook's route
sees them, and the Fetch guard (every document, redirect hop and internal request of the tab
checked over CDP before it is sent; every sign-in challenge cancelled).

The knock-out run (tests/knockout) switches these off by name: `_answer_dialog`,
`_close_popup`, `Downloads.cancel`, `PageGuards._guard_request`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urldefrag

import structlog
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from .._settings import Settings
from ..safety._fetch_guard import install_fetch_guard
from ..safety._policy import internal_request, is_allowed
from ..stage._screen import prepare_page
from ._close import close_page

PageHook = Callable[[Page], Awaitable[None]]
log = structlog.get_logger("browser_core.driver")


class Downloads:
    """The downloads the owned tab started since the last navigation; each is cancelled."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def reset(self) -> None:
        self.urls.clear()

    async def cancel(self, download: Any) -> None:
        self.urls.append(str(download.url))
        log.info("driver.download_cancelled", url=str(download.url)[:200])
        with contextlib.suppress(PlaywrightError):
            await download.cancel()

    async def fired(self) -> bool:
        """An aborted navigation is a download only if a download event really came."""
        for _ in range(10):
            if self.urls:
                return True
            await asyncio.sleep(0.05)
        return False

    def only_of_others(self, url: str) -> bool:
        """Every download since the reset was of another address than `url`: the page that
        was there started it (a timer of its own), and it aborted our navigation."""
        ours = urldefrag(url).url
        return bool(self.urls) and all(urldefrag(u).url != ours for u in self.urls)


class PageGuards:
    """Prepares each page that becomes the owned tab (see the module docstring)."""

    def __init__(self, settings: Settings, hooks: list[PageHook], downloads: Downloads) -> None:
        self.settings = settings
        self.hooks = hooks  # the driver's `page_hooks`: the same list
        self.downloads = downloads

    async def prepare(self, page: Page) -> None:
        page.on("dialog", _answer_dialog)
        page.on("popup", _close_popup)
        page.on("download", self.downloads.cancel)
        page.set_default_timeout(self.settings.nav_timeout_s * 1000)
        await prepare_page(page, self.settings)  # the clean screen (bounded, never raises)
        for hook in self.hooks:
            await hook(page)
        if self.hooks:
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


async def _answer_dialog(dialog: Any) -> None:
    """Dismiss alerts, confirms and prompts; let `beforeunload` go (else we could never leave)."""
    leave = dialog.type == "beforeunload"
    log.info("driver.dialog_answered", dialog_type=dialog.type, accepted=leave)
    with contextlib.suppress(PlaywrightError):
        await (dialog.accept() if leave else dialog.dismiss())


async def _close_popup(popup: Page) -> None:
    log.info("driver.popup_closed", url=popup.url[:200])
    await close_page(popup, 5.0)  # also a popup that keeps navigating
