"""Organic results found by what they are, not by their markup: an outside link with a title,
an address line (a `<cite>`, a host or a `host › path` breadcrumb) and a description in its
block, in the main column. Any engine's parser falls back to it when its markup-based reading
finds no title at all (titles no longer in `<h3>`, class names renamed).
"""

from __future__ import annotations

from lxml.etree import _Element

from ._dom import ancestors
from ._health import Link, is_address, key, link_snippet
from ._models import SerpResult
from ._urls import host_path

# How far up a link's block reaches: a result's container is a few levels above its title.
_CLIMB = 6
# A title is a phrase: links with less text ("Cached", "Similar", "Translate") are controls.
_TITLED = 12


def structural_results(links: list[Link]) -> list[SerpResult]:
    """The links that open a result's block (the first link of a block that holds one site's
    links only, with an address line and a description), ranked in page order."""
    titled = [link for link in links if len(link.title) >= _TITLED]
    blocks = _site_blocks(titled)
    results: list[SerpResult] = []
    seen: set[str] = set()
    opened: set[int] = set()
    for link in titled:
        block = blocks[id(link.anchor)]
        k = key(link.url)
        if id(block) in opened or k in seen or block is link.anchor:
            continue
        opened.add(id(block))
        if not _has_address(block, link):
            continue
        snippet = link_snippet(block, link.anchor, link.title)
        if not snippet:
            continue
        seen.add(k)
        results.append(
            SerpResult(rank=len(results) + 1, title=link.title, url=link.url, snippet=snippet)
        )
    return results


def _site_blocks(links: list[Link]) -> dict[int, _Element]:
    """For each link, the largest ancestor (a few levels up) whose links all go to its site."""
    sites: dict[_Element, set[str]] = {}
    chains: list[list[_Element]] = []
    for link in links:
        chain = list(ancestors(link.anchor, _CLIMB))
        chains.append(chain)
        host = host_path(link.url)[0]
        for node in chain:
            sites.setdefault(node, set()).add(host)
    blocks: dict[int, _Element] = {}
    for link, chain in zip(links, chains, strict=True):
        block = link.anchor
        for node in chain:
            if len(sites[node]) > 1:
                break
            block = node
        blocks[id(link.anchor)] = block
    return blocks


def _has_address(block: _Element, link: Link) -> bool:
    """The block shows an address line: a `<cite>`, or a text that is a host or breadcrumb."""
    if block.xpath(".//cite"):
        return True
    host = host_path(link.url)[0].removeprefix("www.")
    for text in block.xpath(".//text()"):
        stripped = text.strip()
        if stripped and (host in stripped or is_address(stripped)) and len(stripped) < 200:
            return True
    return False
