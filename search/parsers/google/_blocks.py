"""A block of the page found from its heading, and its text in reading order.

Google's class names change every few months; a block's heading text, its tags and roles
and where it sits between the other blocks do not. `block_of` climbs from a heading to the
largest ancestor that holds no other block (no organic result, no other section heading, no
main container); `text_blocks` reads a block's visible text as a person reads it: paragraphs,
headings and list items in order, without buttons, hidden parts, scripts or source cards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from lxml.etree import _Element

from .._dom import SPACES, text_of
from .._health import CLAIMED
from ._ui_text import fold

# Containers a block never reaches past: the results column, the side panel, ads, the page.
BOUNDARY_IDS = frozenset(
    {"rso", "search", "center_col", "rcnt", "main", "cnt", "rhs", "res", "botstuff", "tads"}
)
_BLOCK_TAGS = frozenset(
    {
        "div",
        "p",
        "li",
        "ul",
        "ol",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "table",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
    }
)
_SKIPPED_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "button", "img", "input", "g-bubble"}
)
_SKIPPED_ROLES = frozenset({"button", "menu", "menuitem", "dialog", "progressbar", "tooltip"})
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_MAX_CLIMB = 14
# An organic result's title link: it holds its heading or its address line (`<cite>`).
_RESULT_LINK = (
    "self::a[@href][.//h3 or .//cite] | .//h3[ancestor::a[@href]] | .//cite[ancestor::a[@href]]"
)


@dataclass(frozen=True)
class TextBlock:
    """One paragraph, heading or list item of a block, in reading order."""

    kind: str  # "p" | "heading" | "li"
    text: str


def short_texts(doc: _Element, longest: int = 60) -> list[Any]:
    """The page's short text nodes (where a block's heading can be), found once and shared by
    every block family that looks for its heading."""
    return list(
        doc.xpath(
            "//text()[not(parent::script or parent::style)]"
            f"[string-length(normalize-space(.)) <= {longest}]"
        )
    )


def headings(
    doc: _Element, wanted: frozenset[str], *, texts: list[Any] | None = None
) -> list[_Element]:
    """Elements whose whole text is one of `wanted` (folded), outermost first, in page order.

    Found from the text nodes (one pass over the page, never each element's whole text); a
    node whose first two letters start no wanted text is passed over before it is folded."""
    starts = {text[:2] for text in wanted}
    found: list[_Element] = []
    for node in short_texts(doc) if texts is None else texts:
        if node.strip()[:2].lower() not in starts or not node.is_text:
            continue
        if fold(node) not in wanted:
            continue
        el = node.getparent()
        if el is None or el.tag in _SKIPPED_TAGS:
            continue
        while (parent := el.getparent()) is not None and fold(text_of(parent)) == fold(node):
            el = parent
        if not any(hit is el or _contains(hit, el) for hit in found):
            found.append(el)
    return found


def _contains(ancestor: _Element, node: _Element) -> bool:
    return any(parent is ancestor for parent in node.iterancestors())


def block_of(heading: _Element, ours: Callable[[str], bool]) -> _Element:
    """The largest ancestor of `heading` that holds no other block; `ours(text)` says which
    other headings belong to this block (its own heading repeated, say)."""
    node = heading
    for _ in range(_MAX_CLIMB):
        parent = node.getparent()
        if parent is None or parent.tag in ("body", "html") or parent.get("id") in BOUNDARY_IDS:
            break
        if any(_foreign(sibling, ours) for sibling in parent if sibling is not node):
            break
        node = parent
    return node


def _foreign(el: _Element, ours: Callable[[str], bool]) -> bool:
    """Whether `el` is (or holds) another block: an organic result, a section heading that
    is not ours, a main container, a claimed block."""
    if not isinstance(el.tag, str):
        return False
    if el.get("id") in BOUNDARY_IDS or el.get(CLAIMED) is not None:
        return True
    if el.xpath(f".//*[@id][{_ids_test()}] | .//*[@{CLAIMED}]"):
        return True
    if el.xpath(_RESULT_LINK):
        return True
    for heading in el.xpath("self::h1 | self::h2 | .//h1 | .//h2"):
        text = text_of(heading)
        if text and not ours(text):
            return True
    return False


def _ids_test() -> str:
    return " or ".join(f'@id="{name}"' for name in sorted(BOUNDARY_IDS))


def hidden(el: _Element) -> bool:
    """Not shown to a person: hidden by attribute or inline style, or interface only."""
    if el.tag in _SKIPPED_TAGS or el.get("role") in _SKIPPED_ROLES:
        return True
    if el.get("aria-hidden") == "true" or el.get("hidden") is not None:
        return True
    style = (el.get("style") or "").replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


def text_blocks(block: _Element, skip: Callable[[_Element], bool]) -> list[TextBlock]:
    """The visible text of `block` as paragraphs, headings and list items in page order;
    elements for which `skip` is true (and everything `hidden`) are left out."""
    out: list[TextBlock] = []
    _walk(block, out, [], "p", skip)
    return _deduplicated(out)


def _walk(
    el: _Element, out: list[TextBlock], buf: list[str], kind: str, skip: Callable[[_Element], bool]
) -> None:
    if el.text:
        buf.append(el.text)
    for child in el:
        if isinstance(child.tag, str) and not hidden(child) and not skip(child):
            _child(child, out, buf, kind, skip)
        if child.tail:
            buf.append(child.tail)


def _child(
    child: _Element,
    out: list[TextBlock],
    buf: list[str],
    kind: str,
    skip: Callable[[_Element], bool],
) -> None:
    heading = child.tag in _HEADING_TAGS or child.get("role") == "heading"
    is_block = child.tag in _BLOCK_TAGS or heading
    if not is_block or (kind == "li" and child.tag not in ("ul", "ol", "li")):
        _walk(child, out, buf, kind, skip)  # inline, or a part of the list item it is in
        return
    _flush(buf, out, kind)
    inner_kind = "li" if child.tag == "li" else "heading" if heading else "p"
    inner: list[str] = []
    _walk(child, out, inner, inner_kind, skip)
    _flush(inner, out, inner_kind)


def _flush(buf: list[str], out: list[TextBlock], kind: str) -> None:
    text = SPACES.sub(" ", "".join(buf)).strip()
    buf.clear()
    if text:
        out.append(TextBlock(kind, text))


def _deduplicated(blocks: list[TextBlock]) -> list[TextBlock]:
    kept: list[TextBlock] = []
    for block in blocks:
        if not kept or kept[-1].text != block.text:
            kept.append(block)
    return kept


def visible_elements(block: _Element) -> Iterator[_Element]:
    """The elements of `block` a person may see (nothing under a hidden one)."""
    stack = [block]
    while stack:
        el = stack.pop()
        if not isinstance(el.tag, str) or (el is not block and hidden(el)):
            continue
        yield el
        stack.extend(reversed(list(el)))
