"""Google as a live engine: its results page for a query (language and region from the
settings or the query's script), its address, and its consent wall's buttons."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import structlog

from browser_core import Settings
from search._language import google_locale
from search.parsers.google import GOOGLE

from ._engine import LiveEngine

log = structlog.get_logger(__name__)

RESULTS_PAGE = re.compile(r"^https://(www\.)?google\.[a-z.]+/search")
# The "Reject all" form of the consent page carries set_eom=true; "Accept all" set_eom=false.
_CONSENT_BUTTON = {
    "reject": (
        'form:has(input[name="set_eom"][value="true"]) button, '
        'form:has(input[name="set_eom"][value="true"]) input[type="submit"]'
    ),
    "accept": (
        'form:has(input[name="set_eom"][value="false"]) button, '
        'form:has(input[name="set_eom"][value="false"]) input[type="submit"]'
    ),
}
# The buttons' names where the wall's forms are not the usual ones: English, Swedish, Danish,
# Norwegian, Finnish, German, Dutch, French, Spanish, Portuguese, Italian, Polish.
_CONSENT_TEXT = {
    "reject": re.compile(
        r"reject all|avvisa alla|afvis alle|avvis alle|hylkää kaikki|alle ablehnen"
        r"|alles afwijzen|tout refuser|rechazar todo|rejeitar tudo|rifiuta tutto"
        r"|odrzuć wszystko",
        re.I,
    ),
    "accept": re.compile(
        r"accept all|godkänn alla|accept[eé]r alle|godta alle|hyväksy kaikki|alle akzeptieren"
        r"|alles accepteren|tout accepter|aceptar todo|aceitar tudo|accetta tutto"
        r"|zaakceptuj wszystko",
        re.I,
    ),
}


def search_url(query: str, settings: Settings) -> str:
    """The Google results URL for `query` with the configured language, region and tab
    (`SB_GOOGLE_HL=auto`: the language and region the query's script points to)."""
    hl, gl = google_locale(
        query, settings.google_hl, settings.google_gl, settings.google_hl_fallback
    )
    params = {"q": query, "hl": hl, "gl": gl}
    if settings.google_udm14:
        params["udm"] = "14"
    return "https://www.google.com/search?" + urlencode(params)


async def answer_consent(page: Any, choice: str, timeout_ms: float = 8000) -> bool:
    """Click "Reject all" (or "Accept all") on a consent wall; True if a button was found."""
    await page.wait_for_load_state("domcontentloaded", timeout=timeout_ms)
    button = page.locator(_CONSENT_BUTTON[choice]).first
    if not await button.count():
        button = page.get_by_role("button", name=_CONSENT_TEXT[choice]).first
        if not await button.count():
            return False
    log.info("google.consent", choice=choice)
    async with page.expect_navigation(wait_until="commit", timeout=timeout_ms):
        await button.click(timeout=timeout_ms)
    return True


GOOGLE_LIVE = LiveEngine(
    name="google",
    title="Google",
    parser=GOOGLE,
    results_url=search_url,
    results_page=RESULTS_PAGE,
    answer_consent=answer_consent,
)
