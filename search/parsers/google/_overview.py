"""Google's AI Overview: the block headed "AI Overview" (2025-2026, in the interface
language; the 2024-2025 "Search Generative Experience" too), its text in reading order and
its cited sources.

Found by its heading's text and the page's structure, never by one class name. The states
"not available", "can't generate" and a still-loading placeholder are no overview: they give
`None` and name the state. Interface text inside the block (Show more, the disclaimer,
feedback, "Dive deeper in AI Mode") is left out; source cards are sources, not text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urldefrag

from lxml.etree import _Element

from .._dom import text_of
from .._models import AiOverview, SerpItem
from .._urls import host_path
from ._blocks import (
    CLAIMED,
    TextBlock,
    block_of,
    headings,
    hidden,
    short_texts,
    text_blocks,
)
from ._deferred import insert_deferred
from ._ui_text import (
    LOADING_WORDS,
    OVERVIEW_FOOTER,
    OVERVIEW_HEADINGS,
    fold,
    is_overview_ui,
    overview_state,
    source_title,
)
from ._urls import GOOGLE_HOST, clean_google_url

# Less text than this is no overview (a label, a state, a button left over).
MIN_CHARS = 20
_MAX_SOURCES = 12


def parse_overview(
    doc: _Element, base: str | None, html: str = "", *, texts: list[Any] | None = None
) -> tuple[AiOverview | None, str | None]:
    """The page's AI Overview and its state: ("ready" | "loading" | "unavailable" | "error"),
    or (None, None) when the page has no overview block at all. `html`: the page's source,
    whose deferred script parts (`_deferred`) fill the overview's empty elements."""
    blocks: list[_Element] = []
    for heading in headings(doc, OVERVIEW_HEADINGS, texts=texts):
        if _in_question(heading):
            continue  # an overview quoted in a "People also ask" answer: not the page's
        block = block_of(heading, _is_heading)
        if not any(block is other for other in blocks):
            blocks.append(block)
    insert_deferred(doc, html, blocks)
    found = [_read_block(block, base) for block in blocks]
    if not found:
        found = _by_structure(doc, base, html, texts)
    if not found:
        return None, None
    ready = [o for o, _ in found if o is not None]
    if ready:
        best = max(ready, key=lambda o: len(o.text))
        return best, "ready" if best.complete else "loading"
    states = [state for _, state in found]
    return None, next((s for s in ("error", "unavailable") if s in states), states[0])


# Its heading in a language or wording not listed: a short heading that names AI.
_NAMES_AI = re.compile(r"(?<![A-Za-z])(AI|IA|KI|ИИ)(?![A-Za-z])")
_CANDIDATES = (
    '//h1 | //h2 | //*[@role="heading"][@aria-level="1" or @aria-level="2"]'
    " | //*[@aria-expanded][@aria-controls]"
)
# Signals an overview block gives beside its heading; this many make one.
_ENOUGH = 3


def _in_question(heading: _Element) -> bool:
    """Inside a "People also ask" entry (an answer revealed under a question)."""
    return bool(
        heading.xpath(
            'ancestor::*[@data-q or contains(concat(" ", @class, " "), " related-question-pair ")'
            " or @data-initq]"
        )
    )


def _by_structure(
    doc: _Element, base: str | None, html: str, texts: list[Any] | None
) -> list[tuple[AiOverview | None, str]]:
    """The overview found without its heading's words: a block of generated prose in the
    main column, not a result or an ad, headed by a short heading (often visually hidden) or
    holding a "Show more" control, that says it is generated (its heading names AI, or its
    disclaimer is there) and has enough of its other marks: its cited sources, several
    paragraphs, a control that expands it, a hidden `<h1>`. Without those, a short block
    headed as generated that says a state in words (unavailable, an error, loading) gives
    that state."""
    if not _says_generated(doc, texts):
        return []  # no short text on the page names AI or is its disclaimer: no overview
    seen: list[_Element] = []
    states: list[tuple[AiOverview | None, str]] = []
    for el in doc.xpath(_CANDIDATES)[:40]:
        label = text_of(el)
        if len(label) > 60 or _in_question(el) or el.xpath("ancestor::*[@id='rhs']"):
            continue
        block = block_of(el, _same(label))
        if any(block is other for other in seen) or block.get(CLAIMED) is not None:
            continue
        seen.append(block)
        if _signals(block, label, base) < _ENOUGH:
            state = _state_of(block, base, label) if _NAMES_AI.search(label) else None
            if state is not None and not states:
                states.append((None, state))
            continue
        insert_deferred(doc, html, [block])
        overview, state = _read_block(block, base, label or "-")
        if overview is not None:
            return [(overview, state)]
        del block.attrib[CLAIMED]
    return states


# A state's block is short: its heading, its message, a button.
_STATE_BLOCK = 600


def _state_of(block: _Element, base: str | None, label: str) -> str | None:
    """The state a short block headed as generated says in words (unavailable, an error) or
    shows (still being written), or None."""
    if len(text_of(block)) > _STATE_BLOCK:
        return None
    for text in _shown_texts(block):
        state = overview_state(text) if len(text) < 160 else None
        if state is not None:
            return state
    overview, state = _read_block(block, base, label)
    del block.attrib[CLAIMED]
    return "loading" if overview is None and state == "loading" and _loading(block) else None


def _shown_texts(block: _Element) -> list[str]:
    """The block's texts a person sees (not in a hidden element, a script or a style)."""
    shown: list[str] = []
    for node in block.xpath(".//text()[not(ancestor::script or ancestor::style)]"):
        text, parent = node.strip(), node.getparent()
        if not text or parent is None:
            continue
        chain = [parent, *parent.iterancestors()]
        chain = chain[: chain.index(block) + 1] if block in chain else chain
        if not any(_concealed(el) for el in chain):
            shown.append(text)
    return shown


def _loading(block: _Element) -> bool:
    """The block says it is being written: a visible progress bar, or its loading words."""
    if _busy(block):
        return True
    texts = block.xpath(".//text()[not(ancestor::script or ancestor::style)]")
    return any(
        fold(t.strip()) in LOADING_WORDS or overview_state(t.strip()) == "loading" for t in texts
    )


def _same(label: str) -> Callable[[str], bool]:
    def same(text: str) -> bool:
        return fold(text) == fold(label)

    return same


def _named(text: str, label: str) -> bool:
    return (
        bool(label)
        and len(text) <= 60
        and (fold(text) == fold(label) or bool(_NAMES_AI.search(text)))
    )


def _says_generated(doc: _Element, texts: list[Any] | None) -> bool:
    for node in short_texts(doc) if texts is None else texts:
        if _NAMES_AI.search(node) or OVERVIEW_FOOTER.search(node):
            return True
    return False


def _signals(block: _Element, label: str, base: str | None) -> int:
    text = text_of(block)
    if len(text) < MIN_CHARS * 6:
        return 0
    paragraphs = block.xpath('.//p | .//li | .//*[@role="heading"][@aria-level="3"]')
    sources = [a for a in block.iter("a") if _external(a.get("href", ""), base)]
    named = bool(_NAMES_AI.search(label)) + bool(OVERVIEW_FOOTER.search(text))
    if not named:
        return 0  # neither its heading nor its disclaimer says it is generated
    return (
        named
        + (len(sources) >= 2)
        + (len(paragraphs) >= 2 or text.count(". ") >= 3)
        + bool(block.xpath(".//*[@aria-expanded][@aria-controls] | .//h1"))
    )


def _is_heading(text: str) -> bool:
    return fold(text) in OVERVIEW_HEADINGS


def _read_block(
    block: _Element, base: str | None, label: str = ""
) -> tuple[AiOverview | None, str]:
    """The overview in `block`; `label`: the heading it was found by when its words are not
    among the known ones (left out of the text, as the known ones are)."""
    block.set(CLAIMED, "overview")
    parts = text_blocks(block, lambda el: _source_card(el, base))
    kept: list[TextBlock] = []
    state: str | None = None
    for part in parts:
        folded = fold(part.text)
        if folded in OVERVIEW_HEADINGS or folded in LOADING_WORDS or is_overview_ui(part.text):
            continue
        if _named(part.text, label) and not kept:
            continue  # its own heading, in words the tables do not hold
        found = overview_state(part.text) if len(part.text) < 160 else None
        if found:
            state = state or found
            continue
        kept.append(part)
    text = "\n".join(f"- {p.text}" if p.kind == "li" else p.text for p in kept)
    if state and len(text) < MIN_CHARS * 4:
        return None, state
    if len(text) < MIN_CHARS:
        return None, "loading"
    busy = _busy(block)
    return (
        AiOverview(
            text=text,
            paragraphs=[p.text for p in kept],
            sources=_sources(block, base),
            complete=not busy,
            footer=bool(OVERVIEW_FOOTER.search(text_of(block))),
            collapsed=_collapsed(block),
        ),
        "loading" if busy else "ready",
    )


def _busy(block: _Element) -> bool:
    """Still being written: a visible progress bar or a block marked busy."""
    for el in block.xpath('.//*[@role="progressbar" or @aria-busy="true"]'):
        chain = [el, *el.iterancestors()]
        shown = chain[: chain.index(block)] if block in chain else chain
        if not any(_concealed(node) for node in shown):
            return True
    return False


def _concealed(el: _Element) -> bool:
    style = (el.get("style") or "").replace(" ", "").lower()
    return (
        el.get("hidden") is not None
        or el.get("aria-hidden") == "true"
        or "display:none" in style
        or "visibility:hidden" in style
    )


def _collapsed(block: _Element) -> bool:
    """Shown cut off behind "Show more" (a control that says it is not expanded)."""
    return bool(block.xpath('.//*[@aria-expanded="false"]'))


def _external(href: str, base: str | None) -> str | None:
    url = clean_google_url(href, base) if href else None
    if url is None:
        return None
    host, _ = host_path(url)
    return None if GOOGLE_HOST.search(host) or host.endswith(".google") else url


def _source_card(el: _Element, base: str | None) -> bool:
    """A link to another site inside the overview: a cited source, not the overview's text."""
    return el.tag == "a" and _external(el.get("href", ""), base) is not None


def _sources(block: _Element, base: str | None) -> list[SerpItem]:
    """The cited sources (hidden trays too: Google keeps the full list in the page), in page
    order, each address once."""
    sources: list[SerpItem] = []
    seen: set[str] = set()
    for anchor in block.iter("a"):
        url = _external(anchor.get("href", ""), base)
        if url is None or urldefrag(url).url in seen:
            continue
        title = _title(anchor)
        if not title:
            continue
        seen.add(urldefrag(url).url)
        sources.append(SerpItem(title=title, url=url, source=_publisher(anchor)))
        if len(sources) >= _MAX_SOURCES:
            break
    return sources


def _title(anchor: _Element) -> str:
    label = source_title(anchor.get("aria-label") or "")
    if label:
        return label[:300]
    for heading in anchor.xpath('.//*[@role="heading"] | .//h3 | .//h4'):
        text = text_of(heading)
        if text:
            return text[:300]
    parts = text_blocks(anchor, hidden)
    return parts[0].text[:300] if parts else ""


def _publisher(anchor: _Element) -> str:
    host, _ = host_path(clean_google_url(anchor.get("href", "")) or "")
    return host.removeprefix("www.")
