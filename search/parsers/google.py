"""Google result page HTML in, `SerpPage` out: organic results, answer, knowledge panel, PAA.

Pure and offline (lxml only). Handles the JS desktop layout (#rso, a > h3), the no-JS/basic
layout (div.ZINbbc, /url?q= wrappers), 2024-2025 rendered DOMs and the pre-2016 h3 > a layout.
A captcha or consent wall is a value (`blocked="captcha" | "consent"`), never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from urllib.parse import parse_qs, urljoin, urlsplit

import lxml.html
import structlog
from lxml.etree import ParserError, _Element

from ._models import KnowledgePanel, SerpItem, SerpPage, SerpResult

__all__ = ["clean_google_url", "detect_interstitial", "parse_serp"]

log = structlog.get_logger(__name__)

_SMALL_PAGE = 60_000
_GOOGLE_HOST = re.compile(r"(^|\.)google\.[a-z.]{2,6}$")
_GOOGLE_SEARCH_HOST = re.compile(r"^(www\.)?google\.[a-z.]{2,6}$")
_INTERNAL_PATHS = frozenset(
    {"/search", "/preferences", "/setprefs", "/webhp", "/imgres", "/aclk", "/sorry/index"}
)
_CONSENT_HOST = re.compile(r"^consent\.(google\.[a-z.]{2,6}|youtube\.com)$")
_SORRY_MARKERS = ("/sorry/", "unusual traffic", "g-recaptcha", "captcha-form")
_CONSENT_FORM = re.compile(r"""action=["']https://consent\.(google\.[a-z.]{2,6}|youtube\.com)/""")
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
_EXCLUDED_ATTRS = ("data-text-ad", "data-initq", "data-rw")
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
_ANSWER_XPATHS = (
    '//*[contains(@class,"Z0LcW")]',
    '//*[contains(@class,"hgKElc")]',
    '//*[@data-tts="answers"]',
    '//*[contains(@class,"IZ6rdc")]',
    '//*[@data-attrid="wa:/description"]',
    '//*[contains(@class,"ILfuVd")]',
)
_SPACES = re.compile(r"\s+")
_BREADCRUMB = re.compile(r"^(https?://)?[\w.-]+\.[a-z]{2,}(:\d+)?\s*(›.*)?$|^.*\s›\s.*$", re.I)


def parse_serp(html: str, url: str | None = None) -> SerpPage:
    """Parse a Google web result page; a wall gives an empty page with `blocked` set."""
    blocked = detect_interstitial(html, url)
    if blocked is not None:
        log.info("serp.blocked", blocked=blocked, url=url)
        return SerpPage(blocked=blocked)
    doc = _document(html)
    if doc is None:
        return SerpPage()
    return SerpPage(
        results=_organic(doc, url),
        answer=_answer(doc),
        knowledge_panel=_knowledge_panel(doc),
        people_also_ask=_people_also_ask(doc),
        top_stories=_top_stories(doc, url),
        videos=_videos(doc, url),
    )


def detect_interstitial(html: str, url: str | None) -> str | None:
    """Say whether this is Google's captcha ("captcha") or cookie wall ("consent") page."""
    host, path = _host_path(url)
    if host == "sorry.google.com" or (_GOOGLE_HOST.search(host) and path.startswith("/sorry/")):
        return "captcha"
    if _CONSENT_HOST.match(host):
        return "consent"
    head = html[: _SMALL_PAGE * 4]
    if len(html) <= _SMALL_PAGE:
        lowered = html.lower()
        if any(marker in lowered for marker in _SORRY_MARKERS):
            return "captcha"
    if _CONSENT_FORM.search(head) and 'id="rso"' not in html and 'id="search"' not in html:
        return "consent"
    return None


def clean_google_url(href: str, base: str | None = None) -> str | None:
    """Unwrap Google's /url?q= redirect; None for Google's own navigation links."""
    absolute = urljoin(base or "https://www.google.com/", href.strip())
    parts = urlsplit(absolute)
    if parts.scheme not in ("http", "https"):
        return None
    if _GOOGLE_HOST.search(parts.hostname or "") and parts.path in ("/url", "/interstitial"):
        query = parse_qs(parts.query)
        target = (query.get("q") or query.get("url") or [""])[0]
        return target if target.startswith(("http://", "https://")) else None
    if _is_internal(parts.hostname or "", parts.path, href):
        return None
    return absolute


def _is_internal(host: str, path: str, href: str) -> bool:
    """Google's own navigation: relative links, search/refinement pages, image viewer, ads."""
    if href.startswith(("/", "#", "?")) and not href.startswith("//"):
        return True
    if _GOOGLE_SEARCH_HOST.match(host):
        return path.rstrip("/") in _INTERNAL_PATHS
    return host.endswith("webcache.googleusercontent.com")


def _host_path(url: str | None) -> tuple[str, str]:
    if not url:
        return "", ""
    parts = urlsplit(url)
    return (parts.hostname or "").lower(), parts.path


def _document(html: str) -> _Element | None:
    try:
        return lxml.html.fromstring(html)
    except (ParserError, ValueError) as exc:
        log.warning("serp.unparseable", error=str(exc))
        return None


def _text(el: _Element | None) -> str:
    if el is None:
        return ""
    return _SPACES.sub(" ", el.text_content()).strip()


def _classes(el: _Element) -> set[str]:
    return set((el.get("class") or "").split())


def _is_excluded(el: _Element) -> bool:
    """True when an ancestor marks the link as an ad, carousel, side panel or PAA entry."""
    node: _Element | None = el
    while node is not None:
        if not isinstance(node.tag, str):
            node = node.getparent()
            continue
        if node.tag in _EXCLUDED_TAGS or node.get("id") in _EXCLUDED_IDS:
            return True
        if _classes(node) & _EXCLUDED_CLASSES:
            return True
        if any(node.get(attr) is not None for attr in _EXCLUDED_ATTRS):
            return True
        if node.get("aria-label") in ("Ads", "Sponsored", "Anzeigen", "Annonces"):
            return True
        node = node.getparent()
    return False


def _title_anchors(doc: _Element) -> list[tuple[_Element, _Element]]:
    """(anchor, heading) pairs in page order: `a > h3` layouts, else the old `h3 > a`."""
    pairs = [(a, a.xpath(".//h3")[0]) for a in doc.xpath("//a[@href][.//h3]")]
    if pairs:
        return pairs
    return [(a, h3) for h3 in doc.xpath("//h3") for a in h3.xpath(".//a[@href]")[:1]]


def _organic(doc: _Element, base: str | None) -> list[SerpResult]:
    pairs = [(a, h) for a, h in _title_anchors(doc) if not _is_excluded(a)]
    blocks = _result_blocks([a for a, _ in pairs])
    results: list[SerpResult] = []
    seen: set[str] = set()
    for anchor, heading in pairs:
        url = clean_google_url(anchor.get("href", ""), base)
        title = _text(heading)
        if url is None or not title or url in seen:
            continue
        seen.add(url)
        snippet = _snippet(blocks.get(anchor), anchor)
        results.append(SerpResult(rank=len(results) + 1, title=title, url=url, snippet=snippet))
    return results


def _result_blocks(anchors: list[_Element]) -> dict[_Element, _Element]:
    """For each title link, the largest ancestor that holds no other title link."""
    counts: dict[_Element, int] = {}
    chains: list[list[_Element]] = []
    for anchor in anchors:
        chain = list(_ancestors(anchor, limit=10))
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


def _ancestors(el: _Element, limit: int) -> Iterator[_Element]:
    node = el.getparent()
    while node is not None and limit > 0 and node.tag not in ("body", "html"):
        yield node
        node = node.getparent()
        limit -= 1


def _snippet(block: _Element | None, anchor: _Element) -> str:
    """The description under a title: the longest link-free text of a known snippet class."""
    if block is None:
        return ""
    for name in _SNIPPET_CLASSES:
        texts = [
            _text(el)
            for el in block.xpath(_SNIPPET_XPATH.format(name=name))
            if not _inside(el, anchor) and not el.xpath(".//a")
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
        if _inside(el, anchor) or el.xpath(".//div") or _in_cite(el):
            continue
        text = _SPACES.sub(" ", "".join(el.xpath(".//text()[not(ancestor::cite)]"))).strip()
        if len(text) > len(best) and not _is_breadcrumb(text):
            best = text
    return best if len(best) >= 20 else ""


def _in_cite(el: _Element) -> bool:
    return el.tag == "cite" or any(node.tag == "cite" for node in el.iterancestors())


def _is_breadcrumb(text: str) -> bool:
    """An address line: a URL, a host, or a `›`-separated path (Google's breadcrumb)."""
    return bool(_BREADCRUMB.match(text)) or text.startswith(("http", "www.", "›"))


def _featured_text(block: _Element) -> str:
    """The description of a featured-snippet result: its answer text, or its list items."""
    if not block.xpath('.//*[contains(@class,"xpdopen")]') and "xpdopen" not in _classes(block):
        return ""
    for xpath in _ANSWER_XPATHS:
        for el in block.xpath("." + xpath):
            text = _text(el)
            if text:
                return text
    items = [t for t in (_text(li) for li in block.xpath(".//ol/li | .//ul/li")) if t]
    return "; ".join(items)


def _inside(el: _Element, container: _Element) -> bool:
    node: _Element | None = el
    while node is not None:
        if node is container:
            return True
        node = node.getparent()
    return False


def _answer(doc: _Element) -> str | None:
    """The direct answer or featured snippet text (answers inside PAA entries do not count)."""
    for xpath in _ANSWER_XPATHS:
        for el in doc.xpath(xpath):
            text = _text(el)
            if text and not _in_paa(el):
                return text
    return _list_answer(doc)


def _list_answer(doc: _Element) -> str | None:
    """A featured snippet that is a list: its items joined with "; "."""
    for box in doc.xpath('//div[contains(@class,"xpdopen")][.//h2]'):
        if box.xpath('.//*[contains(@class,"related-question-pair")]'):
            continue
        for items in box.xpath(".//ol | .//ul"):
            texts = [t for t in (_text(li) for li in items.xpath("./li")) if t]
            if texts:
                return "; ".join(texts)
    return None


def _in_paa(el: _Element) -> bool:
    return any("related-question-pair" in (node.get("class") or "") for node in el.iterancestors())


def _knowledge_panel(doc: _Element) -> KnowledgePanel | None:
    titles = doc.xpath(
        '//*[@data-attrid="title"] | //*[contains(@class,"kno-ecr-pt")]'
        ' | //*[@id="rhs"]//*[@role="heading" and @aria-level="2"]'
    )
    title = next((t for t in (_text(el) for el in titles) if t), "")
    if not title:
        return None
    descriptions = doc.xpath(
        '//*[contains(@class,"kno-rdesc")]//span | //*[@data-attrid="description"]//span'
    )
    description = next((t for t in (_text(el) for el in descriptions) if len(t) > 20), "")
    return KnowledgePanel(title=title, description=description, facts=_facts(doc))


def _facts(doc: _Element) -> dict[str, str]:
    facts: dict[str, str] = {}
    for row in doc.xpath('//*[contains(@class,"w8qArf")]/..'):
        label = _text(row.xpath('.//*[contains(@class,"w8qArf")]')[0]).rstrip(": ").strip()
        values = row.xpath('.//*[contains(@class,"LrzXr")]')
        value = _text(values[0]) if values else _text(row)[len(label) :].lstrip(": ").strip()
        if label and value and label not in facts:
            facts[label] = value
    return facts


def _people_also_ask(doc: _Element) -> list[str]:
    questions: list[str] = []
    for el in doc.xpath("//*[contains(concat(' ', @class, ' '), ' related-question-pair ')]"):
        text = el.get("data-q") or _first_text(el)
        if text and text not in questions:
            questions.append(text)
    return questions


def _first_text(el: _Element) -> str:
    for node in el.xpath('.//*[@role="button"]//span | .//*[@role="heading"]'):
        text = _text(node)
        if text:
            return text
    return _text(el)[:200]


def _top_stories(doc: _Element, base: str | None) -> list[SerpItem]:
    anchors = doc.xpath(
        '//g-section-with-header//a[.//*[@role="heading"]]'
        ' | //a[contains(@class,"WlydOe")]'
        ' | //g-inner-card//a[.//*[@role="heading"]]'
    )
    return _items(anchors, base, exclude_video=True)


def _videos(doc: _Element, base: str | None) -> list[SerpItem]:
    anchors = doc.xpath(
        '//video-voyager//a[@href] | //*[@data-vid]//a[@href] | //a[contains(@class,"X5OiLe")]'
        ' | //g-scrolling-carousel//a[contains(@href,"youtube.com/watch")]'
    )
    return [item for item in _items(anchors, base, exclude_video=False) if _is_video(item.url)]


def _is_video(url: str) -> bool:
    return any(host in url for host in ("youtube.com/", "youtu.be/", "vimeo.com/", "/video"))


def _items(anchors: Iterable[_Element], base: str | None, *, exclude_video: bool) -> list[SerpItem]:
    items: list[SerpItem] = []
    seen: set[str] = set()
    for anchor in anchors:
        url = clean_google_url(anchor.get("href", ""), base)
        if url is None or url in seen or (exclude_video and _is_video(url)):
            continue
        headings = anchor.xpath(
            './/*[@role="heading"] | .//h3 | .//*[contains(@class,"cHaqb")]'
            ' | .//*[contains(@class,"fc9yUc")]'
        )
        title = _text(headings[0]) if headings else _text(anchor)
        if not title:
            continue
        seen.add(url)
        items.append(SerpItem(title=title, url=url, source=_source(anchor)))
    return items


def _source(anchor: _Element) -> str:
    for el in anchor.xpath(
        './/*[contains(@class,"CEMjEf") or contains(@class,"MgUUmf")'
        ' or contains(@class,"NUnG9d") or contains(@class,"pcJO7e")]'
    ):
        text = _text(el)
        if text:
            return text
    return ""
