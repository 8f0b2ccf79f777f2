"""The small lxml helpers every results-page parser shares (Google's block families, Bing's):
the document, an element's text with its spaces folded, its classes, where it sits in the tree."""

from __future__ import annotations

import re
from collections.abc import Iterator

import lxml.html
import structlog
from lxml.etree import ParserError, _Element

log = structlog.get_logger("search.parsers")

SPACES = re.compile(r"\s+")


def document(html: str) -> _Element | None:
    try:
        return lxml.html.fromstring(html)
    except (ParserError, ValueError) as exc:
        log.warning("serp.unparseable", error=str(exc))
        return None


def text_of(el: _Element | None) -> str:
    if el is None:
        return ""
    return SPACES.sub(" ", el.text_content()).strip()


def classes(el: _Element) -> set[str]:
    return set((el.get("class") or "").split())


def inside(el: _Element, container: _Element) -> bool:
    node: _Element | None = el
    while node is not None:
        if node is container:
            return True
        node = node.getparent()
    return False


def ancestors(el: _Element, limit: int) -> Iterator[_Element]:
    node = el.getparent()
    while node is not None and limit > 0 and node.tag not in ("body", "html"):
        yield node
        node = node.getparent()
        limit -= 1
