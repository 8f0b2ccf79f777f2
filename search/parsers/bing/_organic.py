"""The organic results: each `li.b_algo` of the results list (2011 on; `div.sa_cc` in 2010)
outside ads and answers, its title link (`h2 > a`, or `a > h2`; `h3 > a` in 2010) and its
description (the caption's paragraph, or a known snippet class), ranked from 1 in page order.
When those class names find nothing (renamed), the results list is found by its shape: the
element whose children are most often a block with one titled outside link and a description.
"""

from __future__ import annotations

from lxml.etree import _Element

from .._dom import SPACES, ancestors, classes, inside, text_of
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


# A result's title: a link in a heading, or a heading in a link (h2 from 2011, h3 in 2010,
# an element with role=heading as engines use in some blocks).
_HEADED = (
    "//h2//a[@href] | //a[@href][.//h2] | //h3//a[@href] | //a[@href][.//h3]"
    ' | //*[@role="heading"]//a[@href] | //a[@href][.//*[@role="heading"]]'
)
# How far up a title link its result's block may be, and how many blocks make a list.
_CLIMB = 6
_LIST = 3


def structural_organic(doc: _Element, base: str | None) -> list[SerpResult]:
    """The results list found by what it is, not by its class names: the element whose
    children are most often a block holding one titled link to another site (and, in it,
    a description); each such child a result, in page order."""
    items: dict[_Element, tuple[_Element, _Element]] = {}
    counts: dict[_Element, int] = {}
    chains: list[tuple[_Element, list[_Element]]] = []
    for anchor in doc.xpath(_HEADED):
        if clean_bing_url(anchor.get("href", ""), base) is None or not text_of(anchor):
            continue
        chain = [anchor, *ancestors(anchor, _CLIMB)]
        chains.append((anchor, chain))
        for node in set(chain):
            counts[node] = counts.get(node, 0) + 1
    lists: dict[_Element, list[_Element]] = {}
    for anchor, chain in chains:
        item = anchor
        for node in chain[1:]:
            if counts[node] > 1:
                break
            item = node
        parent = item.getparent()
        if item is anchor or parent is None or item in items:
            continue
        items[item] = (anchor, parent)
        lists.setdefault(parent, []).append(item)
    if not lists:
        return []
    best = max(lists.values(), key=len)
    if len(best) < _LIST:
        return []
    results: list[SerpResult] = []
    seen: set[str] = set()
    for item in best:
        anchor = items[item][0]
        url = clean_bing_url(anchor.get("href", ""), base)
        title = text_of(anchor)
        snippet = _snippet(item, anchor) or _longest_text(item, anchor)
        if url is None or url in seen or not snippet:
            continue
        seen.add(url)
        item.set(READ, "organic")
        results.append(SerpResult(rank=len(results) + 1, title=title, url=url, snippet=snippet))
    return results


def _longest_text(item: _Element, anchor: _Element) -> str:
    """The item's longest element text outside its title link: its description."""
    best = ""
    for el in item.iter("div", "p", "span"):
        if inside(el, anchor) or inside(anchor, el):
            continue
        text = text_of(el)
        if len(text) > len(best) and len(text) >= 40:
            best = text
    return best
