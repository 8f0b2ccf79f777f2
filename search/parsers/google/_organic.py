"""The organic results: each title link (`a > h3`, or the old `h3 > a`) outside ads,
carousels, the side panel and "People also ask", with its description (a known snippet class,
else the block's longest text that is not its address), ranked from 1 in page order.
"""

from __future__ import annotations

import re

from lxml.etree import _Element

from .._dom import SPACES, ancestors, classes, inside, text_of
from .._health import READ, link_title
from .._models import SerpResult
from ._answer import ANSWER_XPATHS
from ._blocks import CLAIMED
from ._carousels import is_video
from ._ui_text import READ_MORE, clean_snippet
from ._urls import clean_google_url

# Containers whose links are not organic results (ads, side panel, carousels, related, PAA).
_EXCLUDED_IDS = frozenset(
    {
        "tads",
        "tadsb",
        "bottomads",
        "rhs",
        "brs",
        "imagebox_bigimages",
        "botstuff_related",
        "appbar",
        "top_nav",
        "searchform",
        "footcnt",
        "fbar",
        "taw",
        "extrares",
    }
)
_EXCLUDED_CLASSES = frozenset(
    {
        "related-question-pair",
        "commercial-unit-desktop-top",
        "commercial-unit-desktop-rhs",
        "uEierd",
        "cu-container",
        "xpdopen-paa",
        "card-section",
    }
)
_EXCLUDED_TAGS = frozenset(
    {
        "g-scrolling-carousel",
        "g-section-with-header",
        "video-voyager",
        "g-inner-card",
        "inline-video",
        "g-accordion-expander",
        "product-viewer-group",
        "g-more-link",
    }
)
_AD_ATTRS = ("data-text-ad", "data-initq", "data-rw")
_EXCLUDED_ATTRS = (*_AD_ATTRS, CLAIMED)
_SNIPPET_CLASSES = (
    "VwiC3b",
    "IsZvec",
    "aCOpRe",
    "st",
    "s3v9rd",
    "lEBKkf",
    "ITZIwc",
    "yXK7lf",
    "Hdw6tb",
)
_SNIPPET_XPATH = (
    './/*[contains(concat(" ", @class, " "), " {name} ")]'
    '[not(.//*[contains(concat(" ", @class, " "), " {name} ")])]'
)
_DENSE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_BREADCRUMB = re.compile(r"^(https?://)?[\w.-]+\.[a-z]{2,}(:\d+)?\s*(›.*)?$|^.*\s›\s.*$", re.I)


def is_excluded(el: _Element, *, claimed: bool = True) -> bool:
    """True when an ancestor marks the link as an ad, carousel, side panel or PAA entry (or,
    with `claimed`, as inside a block another family claimed)."""
    attrs = _EXCLUDED_ATTRS if claimed else _AD_ATTRS
    node: _Element | None = el
    while node is not None:
        if not isinstance(node.tag, str):
            node = node.getparent()
            continue
        if node.tag in _EXCLUDED_TAGS or node.get("id") in _EXCLUDED_IDS:
            return True
        if classes(node) & _EXCLUDED_CLASSES:
            return True
        for attr in attrs:
            if node.get(attr) is not None:
                return True
        if node.get("aria-label") in ("Ads", "Sponsored", "Anzeigen", "Annonces"):
            return True
        node = node.getparent()
    return False


# A result's title link, by what it holds: its heading (`<h3>`), or the address line Google
# draws inside a result's link (`<cite>`, since 2020; its heading is then any element that
# says it is one, else the link's own text without the address). No one of them is needed.
_HEADED = './/h3 | .//*[@role="heading"]'
TITLE_LINKS = '//a[@href][.//h3 or .//cite or .//*[@role="heading"]]'
_OLD_TITLES = ("//h3[.//a[@href]]", '//*[@role="heading"][.//a[@href]]')


def _title_anchors(doc: _Element) -> list[tuple[_Element, _Element | None]]:
    """(anchor, heading) pairs in page order: a link holding its heading or its address line
    (heading None: the link's text is the title), else the old `h3 > a` (or a role=heading
    element around the link)."""
    found: dict[_Element, _Element | None] = {}
    for a in doc.xpath(TITLE_LINKS):
        headed = a.xpath(_HEADED)
        found[a] = headed[0] if headed else None
    for xpath in _OLD_TITLES:
        if any(h is not None for h in found.values()):
            break
        for heading in doc.xpath(xpath):
            found.setdefault(heading.xpath(".//a[@href]")[0], heading)
    return [(a, found[a]) for a in doc.iter("a") if a in found]


def not_results(el: _Element) -> bool:
    """True when the link sits where no organic result is: an ad, a carousel, the side
    panel, "People also ask" (a claimed block may still hold some: the health check asks)."""
    return is_excluded(el, claimed=False)


def organic(doc: _Element, base: str | None) -> list[SerpResult]:
    _drop_read_more(doc)
    pairs = [(a, h) for a, h in _title_anchors(doc) if not is_excluded(a)]
    blocks = _result_blocks([a for a, _ in pairs])
    results: list[SerpResult] = []
    seen: set[str] = set()
    for anchor, heading in pairs:
        url = clean_google_url(anchor.get("href", ""), base)
        if url is None or url in seen:
            continue
        title = text_of(heading) if heading is not None else link_title(anchor)
        block = blocks.get(anchor)
        snippet = clean_snippet(_snippet(block, anchor))
        if not title or _video_card(anchor, url):
            continue
        seen.add(url)
        if block is not None:
            block.set(READ, "organic")
        results.append(SerpResult(rank=len(results) + 1, title=title, url=url, snippet=snippet))
    return results


def _video_card(anchor: _Element, url: str) -> bool:
    """A video carousel's card: a link to a video with an address line but no `<h3>` (a video
    that is an organic result has its `<h3>`)."""
    return is_video(url) and not anchor.xpath(".//h3")


def _result_blocks(anchors: list[_Element]) -> dict[_Element, _Element]:
    """For each title link, the largest ancestor that holds no other title link."""
    counts: dict[_Element, int] = {}
    chains: list[list[_Element]] = []
    for anchor in anchors:
        chain = list(ancestors(anchor, limit=10))
        chains.append(chain)
        for node in chain:
            counts[node] = counts.get(node, 0) + 1
    blocks: dict[_Element, _Element] = {}
    for anchor, chain in zip(anchors, chains, strict=True):
        block = anchor
        for node in chain:
            if counts[node] > 1 or node.get("id") in ("rso", "search", "main", "res"):
                break
            block = node
        blocks[anchor] = block
    return blocks


def _snippet(block: _Element | None, anchor: _Element) -> str:
    """The description under a title: the longest link-free text of a known snippet class."""
    if block is None:
        return ""
    for name in _SNIPPET_CLASSES:
        texts = [
            text_of(el)
            for el in block.xpath(_SNIPPET_XPATH.format(name=name))
            if not inside(el, anchor) and not el.xpath(".//a")
        ]
        best = max(texts, key=len, default="")
        if best:
            return best
    return _fallback_snippet(block, anchor)


def _fallback_snippet(block: _Element, anchor: _Element) -> str:
    """The longest text leaf-ish element of the block outside the title link; never the
    breadcrumb (`site › path › ...`), which is an address, not a description. A featured
    snippet's result is described by the featured text (its answer or list items)."""
    featured = _featured_text(block)
    if featured:
        return featured
    best = ""
    for el in block.iter("span", "div"):
        if inside(el, anchor) or el.xpath(".//div") or _in_cite(el):
            continue
        text = SPACES.sub(" ", "".join(el.xpath(".//text()[not(ancestor::cite)]"))).strip()
        if len(text) > len(best) and not _is_breadcrumb(text):
            best = text
    # A description is a sentence, not a label: 20 characters, or 10 in scripts whose
    # characters are words (Han, kana, Hangul).
    return best if len(best) >= 20 or (len(best) >= 10 and _DENSE.search(best)) else ""


def _in_cite(el: _Element) -> bool:
    return el.tag == "cite" or any(node.tag == "cite" for node in el.iterancestors())


def _is_breadcrumb(text: str) -> bool:
    """An address line: a URL, a host, or a `›`-separated path (Google's breadcrumb)."""
    return bool(_BREADCRUMB.match(text)) or text.startswith(("http", "www.", "›"))


def _featured_text(block: _Element) -> str:
    """The description of a featured-snippet result: its answer text, or its list items."""
    if not block.xpath('.//*[contains(@class,"xpdopen")]') and "xpdopen" not in classes(block):
        return ""
    for xpath in ANSWER_XPATHS:
        for el in block.xpath("." + xpath):
            text = text_of(el)
            if text:
                return text
    items = [t for t in (text_of(li) for li in block.xpath(".//ol/li | .//ul/li")) if t]
    return "; ".join(items)


def _drop_read_more(doc: _Element) -> None:
    """The "Read more" link that ends a 2026 snippet (it names its result's title by
    `aria-describedby`), taken out of the tree: it is interface, not description."""
    for link in doc.xpath("//a[@aria-describedby] | //a[string-length(normalize-space(.)) < 30]"):
        ui = link.get("aria-describedby") or READ_MORE.fullmatch(" " + text_of(link))
        if ui and not link.xpath(".//h3"):
            link.drop_tree()
