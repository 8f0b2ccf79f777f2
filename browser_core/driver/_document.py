"""The page's HTML once its document is parsed, for the providers that parse it.

Guards against a page that moves itself on while it is read (a meta refresh, a script
redirect to a consent page): `page.content()` alone fails when the next document commits
during it; the page is then read where it went. A page that never stops moving was, when the
caller can say how, not the caller's at all: a tab a person left on a page that moves itself
on (a meta-refresh ping-pong) can have that page's own next navigation commit after ours (on
a loaded 2-core machine, one read in some hundreds, without a "navigation interrupted"
from `goto`), and the page goes on moving where ours should be. The caller's `reopen` then
opens its page once more, from a blank document that nothing moves on. A page read away from
the caller's address (`ours`) must also stay where it is for a moment after it was read: a
ping-pong page can be read between two of its moves, and was then handed over as the read
(then `Execution context was destroyed` from the next step, or the wrong page's text).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urldefrag

import structlog
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from ._playwright_errors import ErrorClass, classify_error

log = structlog.get_logger("browser_core.driver")


async def document_html(
    page: Page,
    *,
    tries: int = 4,
    timeout_ms: float = 10_000,
    reopen: Callable[[], Awaitable[Any]] | None = None,
    ours: str | None = None,
) -> str:
    """The page's HTML once its document is parsed; a page that moves itself on while it is
    read (a meta refresh, a script redirect to a consent page) is read where it went.

    `page.content()` alone fails when the next document commits during it. After such a
    failure the next read waits for the new address's DOMContentLoaded, not just any: the
    old document's state can still be what Playwright reports. A page that keeps moving
    (`tries` times) still raises, as a page that never settles should, unless `reopen` is
    given: it is called once (it opens the caller's page again) and the page is read anew.
    With `reopen`, a page read at another address than `ours` (it moved itself on, or was
    moved) is kept only if no document commits in it for `STILL_S` after (`stays`).
    """
    try:
        html = await _read(page, tries, timeout_ms)
        if reopen is None or ours is None or _same(page.url, ours) or await stays(page):
            return html
        log.info("driver.document_reopened", moving=page.url[:200], why="still moving")
    except PlaywrightError as exc:
        if reopen is None or classify_error(exc) is not ErrorClass.MOVED:
            raise
        log.info("driver.document_reopened", moving=page.url[:200], why=ErrorClass.MOVED.value)
    await reopen()
    return await _read(page, tries, timeout_ms)


STILL_S = 0.25  # no document committed for this long: the page stays where it is


class Commits:
    """Counts the documents that commit in `page`'s main frame while it is entered."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.count = 0

    def _committed(self, frame: Any) -> None:
        if frame is self.page.main_frame:
            self.count += 1

    def __enter__(self) -> Commits:
        self.page.on("framenavigated", self._committed)
        return self

    def __exit__(self, *_: object) -> None:
        self.page.remove_listener("framenavigated", self._committed)


async def stays(page: Page, quiet_s: float = STILL_S, within_s: float = 2.0) -> bool:
    """Whether no document commits in `page`'s main frame for `quiet_s`, within `within_s`
    (a page that moved itself on once, to a consent page or a new address, stays; a page
    that keeps moving does not)."""
    with Commits(page) as commits:
        until = time.monotonic() + within_s
        while time.monotonic() + quiet_s <= until:
            seen = commits.count
            await asyncio.sleep(quiet_s)
            if commits.count == seen:
                return True
        return False


def _same(a: str, b: str) -> bool:
    return urldefrag(a).url == urldefrag(b).url


async def _read(page: Page, tries: int, timeout_ms: float) -> str:
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
