"""Bing results page HTML in, `SerpPage` out (the same model as Google's parse).

Pure and offline (lxml only). Handles the 2011-2022 layout (`#b_results > li.b_algo`, `h2 > a`,
`.b_caption p`), the 2010 one (`ul.sb_results`, `div.sa_cc`, `h3 > a`) and the /ck/a wrapped
links of 2023 on. Bing's challenge and consent pages are a value (`blocked`), never an exception.
"""

from __future__ import annotations

import re

import structlog

from .._dom import document
from .._engine import Engine
from .._health import Column, assess
from .._models import SerpPage
from .._structure import structural_results
from ._answer import answer_box, knowledge_panel, people_also_ask
from ._blocked import detect_bing_interstitial
from ._organic import is_excluded, organic, structural_organic
from ._urls import BING_HOST, clean_bing_url

__all__ = ["BING", "clean_bing_url", "detect_bing_interstitial", "parse_bing"]

log = structlog.get_logger("search.parsers.bing")

# The main column as the parse's health check sees it (2011 on: b_results; 2010: sw_content).
COLUMN = Column(
    ids=("b_results", "b_content", "sw_content"),
    clean=clean_bing_url,
    own_host=BING_HOST,
    excluded=is_excluded,
    wrappers=("/ck/a?",),
)


def parse_bing(html: str, url: str | None = None) -> SerpPage:
    """Parse a Bing web results page; a wall gives an empty page with `blocked` set."""
    blocked = detect_bing_interstitial(html, url)
    if blocked is not None:
        log.info("serp.blocked", engine="bing", blocked=blocked, url=url)
        return SerpPage(engine="bing", blocked=blocked)
    doc = document(html)
    if doc is None:
        return SerpPage(engine="bing")
    # Its class names first; when they find nothing (renamed), the results list by its shape.
    results = organic(doc, url) or structural_organic(doc, url)
    page = SerpPage(
        engine="bing",
        results=results,
        answer=answer_box(doc),
        knowledge_panel=knowledge_panel(doc),
        people_also_ask=people_also_ask(doc),
    )
    return assess(doc, page, COLUMN, url, fallback=structural_results)


BING = Engine(
    name="bing",
    host=BING_HOST,
    # The results list and content column (2011 on; sw_content and sb_results in 2010), the
    # consent dialog, the challenge.
    markers=re.compile(
        r"""id=["'](b_results|b_content|sw_content|bnp_container)["']"""
        r"""|class=["']sb_results["']|/turing/captcha/"""
    ),
    parse=parse_bing,
    blocked=detect_bing_interstitial,
)
