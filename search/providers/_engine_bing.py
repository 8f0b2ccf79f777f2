"""Bing as a live engine: its results page for a query (the same language and region as
Google's), its address, and its cookie dialog's buttons (`#bnp_btn_reject` / `_accept`)."""

from __future__ import annotations

import contextlib
import re
from typing import Any
from urllib.parse import urlencode

import structlog
from playwright.async_api import Error as PlaywrightError

from browser_core import Settings
from search._language import google_locale
from search.parsers.bing import BING

from ._engine import LiveEngine

log = structlog.get_logger(__name__)

RESULTS_PAGE = re.compile(r"^https://(www\.)?bing\.com/search")
# How long an answered cookie dialog has to load the results page again.
_MOVE_MS = 3000


def bing_url(query: str, settings: Settings) -> str:
    """The Bing results URL for `query`: `setlang` and `cc` as Google's `hl` and `gl`."""
    hl, gl = google_locale(
        query, settings.google_hl, settings.google_gl, settings.google_hl_fallback
    )
    return "https://www.bing.com/search?" + urlencode({"q": query, "setlang": hl, "cc": gl})


async def answer_bing_consent(page: Any, choice: str, timeout_ms: float = 8000) -> bool:
    """Press the cookie dialog's reject (or accept) button; True if there was one. The press
    is the button's own (the stage may already hide the dialog from the audience, and the
    consent rules may have answered it first: then the page is already moving on). The
    dialog may close in place or load the results page again: either is waited for."""
    await page.wait_for_load_state("domcontentloaded", timeout=timeout_ms)
    button = page.locator(f"#bnp_btn_{choice}").first
    if not await button.count():
        return False
    log.info("bing.consent", choice=choice)
    with contextlib.suppress(PlaywrightError):  # no navigation: the dialog closed in place
        async with page.expect_navigation(wait_until="domcontentloaded", timeout=_MOVE_MS):
            await button.evaluate("(b) => b.click()", timeout=timeout_ms)
    return True


BING_LIVE = LiveEngine(
    name="bing",
    title="Bing",
    parser=BING,
    results_url=bing_url,
    results_page=RESULTS_PAGE,
    answer_consent=answer_bing_consent,
)
