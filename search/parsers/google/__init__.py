"""Google result page HTML in, `SerpPage` out: a module per block family.

Pure and offline (lxml only). Handles the JS desktop layout (#rso, a > h3), the no-JS/basic
layout (div.ZINbbc, /url?q= wrappers), 2024-2026 rendered DOMs and the pre-2016 h3 > a layout.
The blocks found by their heading's text (the AI Overview, forums, short videos) are read first.
A captcha or consent wall is a value (`blocked="captcha" | "consent"`), never an exception.
"""

from __future__ import annotations

import re

import structlog

from .._dom import document
from .._engine import Engine
from .._health import Column, assess
from .._models import ParseHealth, SerpItem, SerpPage
from .._structure import structural_results
from ._answer import answer_box, knowledge_panel, people_also_ask
from ._blocked import detect_interstitial
from ._blocks import short_texts
from ._carousels import top_stories, videos
from ._families import families
from ._organic import not_results, organic
from ._overview import parse_overview
from ._urls import ACCOUNT_HOST, GOOGLE_HOST, clean_google_url, other_tab

__all__ = ["GOOGLE", "clean_google_url", "detect_interstitial", "other_tab", "parse_serp"]

log = structlog.get_logger("search.parsers.google")

# The main column as the parse's health check sees it (2016 on: center_col, rso; 2009: res);
# Google's own sites are results too (support.google.com for "google"), its account pages not.
COLUMN = Column(
    ids=("center_col", "rso", "search", "res"),
    clean=clean_google_url,
    own_host=ACCOUNT_HOST,
    excluded=not_results,
    wrappers=("/url?", "/interstitial?"),
)


def parse_serp(html: str, url: str | None = None) -> SerpPage:
    """Parse a Google web result page; a wall gives an empty page with `blocked` set."""
    blocked = detect_interstitial(html, url)
    if blocked is not None:
        log.info("serp.blocked", blocked=blocked, url=url)
        return SerpPage(blocked=blocked)
    doc = document(html)
    if doc is None:
        return SerpPage()
    # The blocks found by their headings first: they claim their links from the organic ones.
    texts = short_texts(doc)  # where the blocks' headings can be, found once
    overview, state = parse_overview(doc, url, html, texts=texts)
    found = families(doc, url, texts=texts)
    results = organic(doc, url)
    page = SerpPage(
        results=results,
        ai_overview=overview,
        ai_overview_state=state,
        discussions=found["discussions"],
        short_videos=found["short_videos"],
        answer=answer_box(doc),
        knowledge_panel=knowledge_panel(doc),
        people_also_ask=people_also_ask(doc),
        top_stories=_merged(top_stories(doc, url), found["top_stories"]),
        videos=videos(doc, url),
    )
    page = assess(doc, page, COLUMN, url, fallback=structural_results)
    if page.health.state == "suspect" and other_tab(html, url, doc) is not None:
        # images, news, videos: not the results this parser reads; it says nothing of them
        return page.model_copy(update={"health": ParseHealth(), "generic": [], "results": results})
    return page


def _merged(first: list[SerpItem], then: list[SerpItem]) -> list[SerpItem]:
    urls = {item.url for item in first}
    return first + [item for item in then if item.url not in urls]


GOOGLE = Engine(
    name="google",
    host=GOOGLE_HOST,
    # The results column (2016 on: rso, rcnt; 2009: res in gsr), the /url?q= redirects of the
    # no-JS layout, the consent wall's form and the captcha page.
    markers=re.compile(
        r"""id=["'](rso|rcnt|gsr)["']|href=["']/url\?q=|consent\.google\.[a-z.]+/|/sorry/index"""
    ),
    parse=parse_serp,
    blocked=detect_interstitial,
)
