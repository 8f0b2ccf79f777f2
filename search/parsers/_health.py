"""A results page's parse checked against the page it came from, and a reading of the page that
does not depend on its markup (the "generic reading"), shared by every engine's parser.

Pure functions over the lxml tree the parse ran on. The page's outside links (to another site:
not the engine's own hosts, navigation or ads) in its main column are the yardstick: a link
that the parse accounts for (a parsed result, an overview source, a carousel entry, a link
inside a block the parse claimed) is fine; many that it does not account for mean the page
changed under the parser. The reasons are machine-stable: a code, a colon, then numbers in
words, e.g. "unaccounted-links: 9 outside links in the main column, 0 parsed".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urldefrag

from lxml.etree import _Element

from ._dom import SPACES, ancestors, text_of
from ._models import ParseHealth, SerpPage, SerpResult
from ._urls import host_path

# Marks the elements the parse read (a result's block, a claimed block: the overview, a forum
# carousel): the outside links inside them are accounted for.
READ = "data-sb-read"
CLAIMED = "data-sb-block"

# A title is text a person can read as one: at least this many characters.
_MIN_TITLE = 3
_MAX_TITLE = 300
_MAX_GENERIC = 30
# A claimed block holding more than half the column's outside links, and this many at least,
# has swallowed the results.
_SWALLOW_MIN = 8
# Unaccounted addresses that make a parse suspect even on one site (a column of one site's
# videos the parse missed): this many, and this many times the results it found.
_MANY_LEFT = 5
_LEFT_RATIO = 2
# How far a link's block reaches up the tree, looking for its description.
_BLOCK_CLIMB = 8
_DENSE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_ADDRESS = re.compile(r"^(https?://)?[\w.-]+\.[a-z]{2,}(:\d+)?\s*(›.*)?$|^.*\s›\s.*$", re.I)


@dataclass(frozen=True)
class Column:
    """What the health check needs to know of an engine's page: the ids its main column has
    had (tried in order; the page's body when none is there), how its links become outside
    addresses (None for its own navigation), its own hosts, and which elements hold no
    results (ads, the side panel, related searches)."""

    ids: tuple[str, ...]
    clean: Callable[[str, str | None], str | None]
    own_host: re.Pattern[str]
    excluded: Callable[[_Element], bool]
    # The engine's relative click wrappers ("/url?"): every other relative link is its own.
    wrappers: tuple[str, ...] = ()

    def outside(self, href: str, base: str | None) -> str | None:
        """The outside address a link goes to, or None (the engine's own, a fragment)."""
        if href.startswith(("#", "?", "javascript:")):
            return None
        if href.startswith("/") and not href.startswith(("//", *self.wrappers)):
            return None
        url = self.clean(href, base)
        return None if url is None or _own(url, self) else url


@dataclass(frozen=True)
class Link:
    """An outside link of the main column: its element, its address, its readable title."""

    anchor: _Element
    url: str
    title: str


def main_column(doc: _Element, column: Column) -> _Element:
    """The page's main column: the first of the engine's known ids that is there, else the
    smallest block holding every result the parse read (its ids renamed), else the body (the
    whole page when it has none)."""
    for name in column.ids:
        found = doc.find(f'.//*[@id="{name}"]')
        if found is not None:
            return found
    around = _around(doc.xpath(f"//*[@{READ}]"))
    if around is not None:
        return around
    body = doc.find(".//body")
    return body if body is not None else doc


# The parsed results that make a column: fewer may be a block beside it.
_COLUMN_RESULTS = 3


def _around(blocks: list[_Element]) -> _Element | None:
    """The smallest element holding all of `blocks` (None for fewer than a column's worth)."""
    if len(blocks) < _COLUMN_RESULTS:
        return None
    chain = list(blocks[0].iterancestors())
    depth = {id(node): i for i, node in enumerate(chain)}
    lowest = 0
    for block in blocks[1:]:
        for node in block.iterancestors():
            index = depth.get(id(node))
            if index is not None:
                lowest = max(lowest, index)
                break
    found = chain[lowest] if chain else None
    return None if found is None or found.tag in ("body", "html") else found


def outside_links(doc: _Element, column: Column, base: str | None) -> list[Link]:
    """The main column's links to other sites with a title, in page order (every occurrence:
    the same address may come twice)."""
    links: list[Link] = []
    for anchor in main_column(doc, column).iter("a"):
        href = anchor.get("href")
        if not href or len(anchor.text_content().strip()) < _MIN_TITLE:
            continue  # no address, or nothing to read (an icon, a thumbnail)
        url = column.outside(href, base)
        if url is None or column.excluded(anchor):
            continue
        title = link_title(anchor)
        if len(title) >= _MIN_TITLE:
            links.append(Link(anchor, url, title))
    return links


def _own(url: str, column: Column) -> bool:
    host, _ = host_path(url)
    return not host or bool(column.own_host.search(host))


def link_title(anchor: _Element) -> str:
    """A link's title: a heading-like element inside it, else its own text without the
    address line a result's link carries (a `<cite>`, a `host › path` breadcrumb)."""
    for el in anchor.xpath('.//*[@role="heading"] | .//h1 | .//h2 | .//h3 | .//h4'):
        text = text_of(el)
        if text:
            return text[:_MAX_TITLE]
    parts = anchor.xpath(".//text()[not(ancestor::cite or ancestor::script or ancestor::style)]")
    text = SPACES.sub(" ", "".join(p for p in parts if not is_address(p.strip()))).strip()
    return text[:_MAX_TITLE]


def key(url: str) -> str:
    """An address as the check compares them: without its fragment, its scheme or "www.", or
    a closing slash."""
    url = urldefrag(url).url
    url = re.sub(r"^https?://(www\.)?", "", url, flags=re.I)
    return url.rstrip("/").lower()


def _scopes(page: SerpPage) -> dict[str, set[str]]:
    """The addresses the parse read, by where it read them: "page" (results, carousels,
    posts: anywhere outside a claimed block), and each claimed block's own (an overview's
    sources account for the links inside the overview only: the results it cites are still
    results to find)."""
    urls = [r.url for r in page.results]
    for items in (page.top_stories, page.videos, page.discussions, page.short_videos):
        urls += [item.url for item in items]
    scopes = {"page": {key(url) for url in urls}}
    if page.ai_overview is not None:
        scopes["overview"] = {key(s.url) for s in page.ai_overview.sources}
    for name, items in (
        ("discussions", page.discussions),
        ("short_videos", page.short_videos),
        ("top_stories", page.top_stories),
    ):
        scopes[name] = {key(item.url) for item in items}
    return scopes


def _scope(anchor: _Element) -> str | None:
    """None when the link is inside a result the parse read; else the claimed block it is
    in ("overview", "discussions", ...) or "page"."""
    for node in (anchor, *anchor.iterancestors()):
        if node.get(READ) is not None:
            return None
        claimed = node.get(CLAIMED)
        if claimed is not None:
            return claimed
    return "page"


def unaccounted(links: Iterable[Link], page: SerpPage) -> list[Link]:
    """The links no parsed block accounts for, each address once, in page order. A link to
    the site of a parsed result is that result's (its sitelinks, its deeper pages); the links
    of a block the parse leaves out on purpose ("Things to know") are accounted for."""
    scopes = _scopes(page)
    sites = {host_path(r.url)[0] for r in page.results}
    seen: set[str] = set()
    left: list[Link] = []
    for link in links:
        k, scope = key(link.url), _scope(link.anchor)
        if scope is None or scope not in scopes:  # read, or in a block left out on purpose
            continue
        if k in scopes[scope] or k in seen or host_path(link.url)[0] in sites:
            continue
        seen.add(k)
        left.append(link)
    return left


def check(
    doc: _Element, page: SerpPage, column: Column, base: str | None, *, overview_empty: bool = False
) -> tuple[ParseHealth, list[Link]]:
    """The parse's health (and the page's outside links, for the generic reading): "suspect"
    when the sites of the outside links the parse does not account for (at least 3 of them,
    2 when it found no result) outnumber the results it found (a carousel of one site's posts
    counts once), or their addresses are 5 or more and over twice the results (a column of one
    site's videos missed), when a page with outside links parsed to nothing, when a claimed block
    holds most of the column, or when a block that looks like an AI Overview gave no text
    (`overview_empty`)."""
    links = outside_links(doc, column, base)
    left = unaccounted(links, page)
    sites = len({host_path(link.url)[0] for link in left})
    parsed = len(page.results)
    distinct = len({key(link.url) for link in links})
    all_sites = len({host_path(link.url)[0] for link in links})
    reasons: list[str] = []
    if parsed == 0 and not _anything(page):
        if all_sites >= 3 or distinct >= _MANY_LEFT:
            reasons.append(f"nothing-parsed: {distinct} outside links in the main column, 0 parsed")
    elif (sites > parsed and sites >= (3 if parsed else 2)) or (
        len(left) >= _MANY_LEFT and len(left) > _LEFT_RATIO * parsed
    ):
        reasons.append(
            f"unaccounted-links: {len(left)} outside links on {sites} sites in the main column,"
            f" {parsed} parsed"
        )
    reasons += _swallowing(links)
    if overview_empty:
        reasons.append("overview-empty: a block that looks like an AI Overview gave no text")
    return ParseHealth(state="suspect" if reasons else "ok", reasons=reasons), links


def _swallowing(links: list[Link]) -> list[str]:
    """A block the parse claimed (forums, short videos, top stories) that holds most of the
    main column's outside links: a block found by its heading has taken in the results."""
    total = len({key(link.url) for link in links})
    held: dict[str, set[str]] = {}
    for link in links:
        scope = _scope(link.anchor)
        if scope not in (None, "page", "overview"):
            held.setdefault(str(scope), set()).add(key(link.url))
    return [
        f"claimed-block: a {name} block holds {len(urls)} of {total} outside links"
        for name, urls in held.items()
        if len(urls) >= _SWALLOW_MIN and len(urls) * 2 > total
    ]


def _anything(page: SerpPage) -> bool:
    return bool(
        page.results
        or page.ai_overview
        or page.answer
        or page.knowledge_panel
        or page.top_stories
        or page.videos
        or page.discussions
    )


def generic_reading(links: Iterable[Link]) -> list[SerpResult]:
    """The main column's outside links with the text around them, ranked in page order, each
    address once: what the page says, read without knowing its markup."""
    links = list(links)
    blocks = _blocks(links)
    out: list[SerpResult] = []
    seen: set[str] = set()
    for link in links:
        k = key(link.url)
        if k in seen:
            continue
        seen.add(k)
        snippet = link_snippet(blocks[id(link.anchor)], link.anchor, link.title)
        out.append(SerpResult(rank=len(out) + 1, title=link.title, url=link.url, snippet=snippet))
        if len(out) >= _MAX_GENERIC:
            break
    return out


def _blocks(links: list[Link]) -> dict[int, _Element]:
    """For each link, the largest ancestor (a few levels up) that holds no link to another
    address: the link's block, where its description is."""
    owners: dict[_Element, set[str]] = {}
    chains: list[list[_Element]] = []
    for link in links:
        chain = list(ancestors(link.anchor, _BLOCK_CLIMB))
        chains.append(chain)
        for node in chain:
            owners.setdefault(node, set()).add(key(link.url))
    blocks: dict[int, _Element] = {}
    for link, chain in zip(links, chains, strict=True):
        block = link.anchor
        for node in chain:
            if len(owners[node]) > 1:
                break
            block = node
        blocks[id(link.anchor)] = block
    return blocks


def link_snippet(block: _Element, anchor: _Element, title: str) -> str:
    """The block's longest leaf-ish text outside the link that is not an address."""
    best = ""
    for el in block.iter("span", "div", "p", "td", "li"):
        if el is anchor or _within(el, anchor) or el.xpath(".//div | .//p"):
            continue
        text = SPACES.sub(" ", "".join(el.xpath(".//text()[not(ancestor::cite)]"))).strip()
        if len(text) > len(best) and text != title and not is_address(text):
            best = text
    return best if len(best) >= 20 or (len(best) >= 10 and _DENSE.search(best)) else ""


def _within(el: _Element, anchor: _Element) -> bool:
    return any(node is anchor for node in el.iterancestors())


def is_address(text: str) -> bool:
    """An address line: a URL, a host, or a `›`-separated path (a breadcrumb)."""
    return bool(_ADDRESS.match(text)) or text.startswith(("http", "www.", "›"))


def assess(
    doc: _Element,
    page: SerpPage,
    column: Column,
    base: str | None,
    *,
    overview_empty: bool = False,
    fallback: Callable[[list[Link]], list[SerpResult]] | None = None,
) -> SerpPage:
    """`page` with its health set, and its generic reading when the health is "suspect".

    A suspect parse first tries `fallback` (the results found by the page's structure, from
    the links outside claimed blocks): when it finds more results than the markup did, they
    are the page's results, the health is checked again and notes it ("structural: ...")."""
    health, links = check(doc, page, column, base, overview_empty=overview_empty)
    if health.state == "suspect" and fallback is not None:
        free = [link for link in links if _scope(link.anchor) == "page"]
        found = fallback(free)
        if len(found) > len(page.results):
            note = (
                f"structural: the markup gave {len(page.results)} results,"
                f" the page's structure {len(found)}"
            )
            page.results = found
            health, links = check(doc, page, column, base, overview_empty=overview_empty)
            health.reasons.append(note)
    page.health = health
    if health.state == "suspect":
        page.generic = generic_reading(links)
    return page
