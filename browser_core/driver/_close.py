"""Closing a tab that keeps navigating: `close_page`.

Measured on Chromium 156 (headful): `Target.closeTarget` (what Playwright's `page.close()`
sends) answers `success` and runs the page's unload on the document it finds; when the page's
own next navigation (a meta refresh, a script's `location=`) commits at that moment, the close
is lost with the document it was sent to, and the tab goes on navigating for good: a
`page.close()` then waits forever (one close in three of a meta-refresh ping-pong, with or
without the driver attached, Fetch guard or not). `close_page` closes, and when the tab is
still there after a moment, puts a blank document in it (no refresh, no script: nothing moves
it on) and closes it again; `close_target_for_good` does the same over HTTP and raw CDP, for
a tab the driver closes without Playwright (a wedged one it replaced).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import structlog
from playwright.async_api import Error as PlaywrightError

from .._cdp_raw import RawCdpError, cdp_calls
from .._errors import CdpUnreachable
from ..chrome import cdp_targets, close_target

log = structlog.get_logger("browser_core.driver")

__all__ = ["CLOSE_RETRY_S", "close_page", "close_target_for_good"]

CLOSE_RETRY_S = 0.3  # a close not done by then was lost: the page is stilled, then closed again


async def close_page(page: Any, timeout: float = 5.0) -> bool:
    """Close `page` within `timeout`, also one that keeps navigating; True once it is closed."""
    if page.is_closed():
        return True
    until = time.monotonic() + timeout
    closing = asyncio.ensure_future(page.close())
    closing.add_done_callback(_consume)
    tries = 0
    while not closing.done():
        left = until - time.monotonic()
        if left <= 0:
            break
        await asyncio.wait({closing}, timeout=min(CLOSE_RETRY_S, left))
        if closing.done() or time.monotonic() >= until:
            break
        tries += 1
        await _still_and_close(page, until)
    if tries:
        log.info("driver.close_retried", tries=tries, closed=page.is_closed())
    return page.is_closed()


async def _still_and_close(page: Any, until: float) -> None:
    """A blank document in the tab (the page's own navigations end), then the close again."""
    session = None
    with contextlib.suppress(PlaywrightError, TimeoutError):
        session = await asyncio.wait_for(page.context.new_cdp_session(page), _left(until))
        await asyncio.wait_for(session.send("Page.navigate", {"url": "about:blank"}), _left(until))
        info = await asyncio.wait_for(session.send("Target.getTargetInfo"), _left(until))
        browser = await asyncio.wait_for(
            page.context.browser.new_browser_cdp_session(), _left(until)
        )
        try:
            target = info["targetInfo"]["targetId"]
            await asyncio.wait_for(
                browser.send("Target.closeTarget", {"targetId": target}), _left(until)
            )
        finally:
            with contextlib.suppress(PlaywrightError):
                await browser.detach()


def _left(until: float) -> float:
    return max(0.05, until - time.monotonic())


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def close_target_for_good(endpoint: str, target_id: str, timeout: float = 2.0) -> bool:
    """Close tab `target_id` over HTTP within `timeout` (also a spinning renderer, where CDP
    commands hang); one still on the strip after a moment is stilled over raw CDP and closed
    again. True once Chrome no longer lists it."""
    until = time.monotonic() + timeout
    tries = 0
    while True:
        with contextlib.suppress(TimeoutError, OSError):
            await asyncio.wait_for(
                asyncio.to_thread(close_target, endpoint, target_id), _left(until)
            )
        await asyncio.sleep(min(CLOSE_RETRY_S, _left(until)))
        tab = await _listed(endpoint, target_id, until)
        if tab is None or time.monotonic() >= until:
            if tries:
                log.info("driver.close_retried", tries=tries, closed=tab is None)
            return tab is None
        tries += 1
        ws_url = tab.get("webSocketDebuggerUrl")
        if ws_url:
            with contextlib.suppress(RawCdpError):
                command = ("Page.navigate", {"url": "about:blank"})
                await asyncio.to_thread(cdp_calls, ws_url, [command], min(0.5, _left(until)))


async def _listed(endpoint: str, target_id: str, until: float) -> dict[str, Any] | None:
    try:
        tabs = await asyncio.to_thread(cdp_targets, endpoint, min(1.0, _left(until)))
    except CdpUnreachable:
        return None
    return next((t for t in tabs if t.get("id") == target_id), None)
