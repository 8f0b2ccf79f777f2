"""The page's HTML once its document is parsed, for the providers that parse it.

Guards against a page that moves itself on while it is read (a meta refresh, a script
redirect to a consent page): `page.content()` alone fails when the next document commits
during it; the page is then read where it went.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from ._playwright_errors import ErrorClass, classify_error


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
