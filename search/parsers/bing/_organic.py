"""The organic results: each `li.b_algo` of the results list (2011 on; `div.sa_cc` in 2010)
outside ads and answers, its title link (`h2 > a`, or `a > h2`; `h3 > a` in 2010) and its
description (the caption's paragraph, or a known snippet class), ranked from 1 in page order.
"""

from __future__ import annotations

from lxml.etree import _Element

from .._dom import SPACES, classes, inside, text_of
from .._health import READ
from .._models import SerpResult
from ._urls import clean_bing_url

_ITEMS = (
    '//li[contains(concat(" ", normalize-space(@class), " "), " b_algo ")]'
    ' | //*[contains(concat(" ", normalize-space(@class), " "), " sa_cc ")]'
)
# Blocks whose entries are not organic results: ads (top, bottom, side; sb_ in 2010),
# answers (their "People also ask" sources are b_algo too), the side panel.
_EXCLUDED_CLASSES = frozenset(
    {"b_ad", "b_adTop", "b_adBottom", "b_adLastChild", "sb_add", "sb_adsW", "sb_adsWv2", "b_ans"}
)
_EXCLUDED_IDS = frozenset({"b_context", "sb_adsN", "sb_adsS", "sb_adsWv2", "b_pole"})
_TITLES = ".//h2//a[@href] | .//a[@href][.//h2] | .//h3//a[@href]"
# Where the description sits, most specific first: 2022+ line-clamped and slug snippets,
# the caption's paragraph (2011-2022), the 2010 paragraph.
_SNIPPETS = (
    './/*[contains(concat(" ", @class, " "), " b_lineclamp")]',
    './/*[contains(concat(" ", @class, " "), " b_algoSlug ")]',
    './/*[contains(concat(" ", @class, " "), " b_paractl ")]',
    './/*[contains(concat(" ", @class, " "), " b_caption ")]//p',
    ".//p",
)

# The text of a snippet without the label 2023 pages start it with ("WEB", "News").
_TEXT = './/text()[not(ancestor::*[contains(@class, "algoSlug_icon")])]'


def organic(doc: _Element, base: str | None) -> list[SerpResult]:
    results: list[SerpResult] = []
    seen: set[str] = set()
    for item in doc.xpath(_ITEMS):
        if is_excluded(item):
            continue
        anchors = item.xpath(_TITLES)
        if not anchors:
            continue
        anchor = anchors[0]
        url = clean_bing_url(anchor.get("href", ""), base)
        title = text_of(anchor)
        if url is None or not title or url in seen:
            continue
        seen.add(url)
        item.set(READ, "organic")
        snippet = _snippet(item, anchor)
        results.append(SerpResult(rank=len(results) + 1, title=title, url=url, snippet=snippet))
    return results


def is_excluded(item: _Element) -> bool:
    """True when the item or a block around it is an ad, an answer or the side panel."""
    for node in (item, *item.iterancestors()):
        if classes(node) & _EXCLUDED_CLASSES or node.get("id") in _EXCLUDED_IDS:
            return True
    return False


def _snippet(item: _Element, anchor: _Element) -> str:
    """The first non-empty description of the item, outside its title link."""
    for xpath in _SNIPPETS:
        for el in item.xpath(xpath):
            if inside(el, anchor) or inside(anchor, el):
                continue
            text = SPACES.sub(" ", "".join(el.xpath(_TEXT))).strip()
            if text:
                return text
    return ""
