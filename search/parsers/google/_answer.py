"""The boxes that answer on the page itself: the direct answer or featured snippet, the
knowledge panel beside the results, and the "People also ask" questions.

Their class names and data attributes first; when those find nothing, their shape: the answer
as prose above its source's title link in the first results' block, the panel as the block
beside the parsed results with a title heading and "label: value" rows."""

from __future__ import annotations

import re

from lxml.etree import XPath, _Element

from .._dom import SPACES, ancestors, inside, text_of
from .._health import READ
from .._models import KnowledgePanel

ANSWER_XPATHS = (
    '//*[contains(@class,"Z0LcW")]',
    '//*[contains(@class,"hgKElc")]',
    '//*[@data-tts="answers"]',
    '//*[contains(@class,"IZ6rdc")]',
    '//*[@data-attrid="wa:/description"]',
    '//*[contains(@class,"ILfuVd")]',
)


def answer_box(doc: _Element) -> str | None:
    """The direct answer or featured snippet text (answers inside PAA entries do not count)."""
    for xpath in ANSWER_XPATHS:
        for el in doc.xpath(xpath):
            text = text_of(el)
            if text and not _in_paa(el):
                return text
    return _list_answer(doc) or _answer_by_shape(doc)


def _list_answer(doc: _Element) -> str | None:
    """A featured snippet that is a list: its items joined with "; "."""
    for box in doc.xpath('//div[contains(@class,"xpdopen")][.//h2]'):
        if box.xpath('.//*[contains(@class,"related-question-pair")]'):
            continue
        for items in box.xpath(".//ol | .//ul"):
            texts = [t for t in (text_of(li) for li in items.xpath("./li")) if t]
            if texts:
                return "; ".join(texts)
    return None


def _in_paa(el: _Element) -> bool:
    return any("related-question-pair" in (node.get("class") or "") for node in el.iterancestors())


def knowledge_panel(doc: _Element) -> KnowledgePanel | None:
    titles = doc.xpath(
        '//*[@data-attrid="title"] | //*[contains(@class,"kno-ecr-pt")]'
        ' | //*[@id="rhs"]//*[@role="heading" and @aria-level="2"]'
    )
    title = next((t for t in (text_of(el) for el in titles) if t), "")
    if not title:
        return _panel_by_shape(doc)
    descriptions = doc.xpath(
        '//*[contains(@class,"kno-rdesc")]//span | //*[@data-attrid="description"]//span'
    )
    description = next((t for t in (text_of(el) for el in descriptions) if len(t) > 20), "")
    return KnowledgePanel(title=title, description=description, facts=_facts(doc))


def _facts(doc: _Element) -> dict[str, str]:
    facts: dict[str, str] = {}
    for row in doc.xpath('//*[contains(@class,"w8qArf")]/..'):
        label = text_of(row.xpath('.//*[contains(@class,"w8qArf")]')[0]).rstrip(": ").strip()
        values = row.xpath('.//*[contains(@class,"LrzXr")]')
        value = text_of(values[0]) if values else text_of(row)[len(label) :].lstrip(": ").strip()
        if label and value and label not in facts:
            facts[label] = value
    return facts


def people_also_ask(doc: _Element) -> list[str]:
    questions: list[str] = []
    for el in doc.xpath(
        "//*[contains(concat(' ', @class, ' '), ' related-question-pair ')] | //*[@data-q]"
    ):
        text = el.get("data-q") or _first_text(el)
        if text and text not in questions:
            questions.append(text)
    return questions


def _first_text(el: _Element) -> str:
    for node in el.xpath('.//*[@role="button"]//span | .//*[@role="heading"]'):
        text = text_of(node)
        if text:
            return text
    return text_of(el)[:200]


# The answer box by its shape, when its class names find nothing: in the block of one of the
# first results, prose above the source's title link, the block's first link with text (a
# result's own description is below it).
_ANSWER_CLIMB = 8
_ANSWER_MIN = 60
_NOT_PROSE = ".//a | .//img | .//style | .//script | ancestor::*[@aria-expanded]"
_TITLE_LINKS = XPath('.//a[@href][.//h3 or .//*[@role="heading"]] | .//h3//a[@href]')
_READ_BLOCKS = XPath(f"//*[@{READ}]")
_SEVERAL_H3 = XPath("count(.//h3) > 1")


def _around_counts(blocks: list[_Element]) -> dict[_Element, int]:
    """How many of `blocks` each of their ancestors holds."""
    counts: dict[_Element, int] = {}
    for block in blocks:
        for node in block.iterancestors():
            counts[node] = counts.get(node, 0) + 1
    return counts


def _answer_by_shape(doc: _Element) -> str | None:
    blocks = _READ_BLOCKS(doc)
    around = _around_counts(blocks)
    for block in blocks[:2]:
        anchors = _TITLE_LINKS(block)
        if not anchors:
            continue
        box = block
        for node in ancestors(block, _ANSWER_CLIMB):
            if around.get(node, 0) > 1 or _SEVERAL_H3(node):
                break
            box = node
        first = next((a for a in box.iter("a") if a.get("href") and _text(a)), anchors[0])
        text = _prose_before(box, first)
        if text:
            return text
    return None


def _prose_before(box: _Element, anchor: _Element) -> str:
    """The longest text above `anchor` in `box`, in an element with no link, not a PAA entry."""
    best = ""
    above = set(anchor.iterancestors())
    for el in box.iter("div", "span", "a"):
        if el is anchor:
            break
        if el.tag == "a" or el in above or el.xpath(_NOT_PROSE):
            continue
        text = _text(el)
        if len(text) > len(best) and len(text) >= _ANSWER_MIN:
            best = text
    return best


# The knowledge panel by its shape: a block with a short title heading and at least two
# "label: value" rows (an element whose first child's text ends with a colon), outside every
# parsed result's block.
_LABEL_ENDS = XPath(
    "//body//text()[contains(., ':')]"
    "[substring(normalize-space(.), string-length(normalize-space(.))) = ':']"
    "[not(parent::script or parent::style)]"
)
# How far above a label's colon its row may start.
_ROW_CLIMB = 4
_PANEL_CLIMB = 25
_WORDS = re.compile(r"\w+")
_HEADINGS = './/h2 | .//*[@role="heading"] | .//h1'


def _panel_by_shape(doc: _Element) -> KnowledgePanel | None:
    rows: list[tuple[_Element, str, str]] = []
    found = _rows(doc)
    if len(found) < 2:
        return None
    reads = _READ_BLOCKS(doc)
    around = _around_counts(reads)
    read = set(reads)
    for row in found:
        if row in read or any(node in read for node in row.iterancestors()):
            continue  # a result's own rich snippet
        label = _text(row[0]).rstrip(": ").strip()
        value = _text(row)[len(_text(row[0])) :].strip()
        if 2 <= len(label) <= 40 and value and len(value) <= 200:
            rows.append((row, label, value))
    # Each row's side block: the largest block around it that holds no parsed result (none
    # when no parsed result is beside it: a page whose results were not found has no side).
    blocks: dict[_Element, list[tuple[_Element, str, str]]] = {}
    nested = {node for row, _, _ in rows for node in row.iterancestors()}
    for row in rows:
        if row[0] in nested:
            continue  # a row around another one: the inner one is the row
        block = row[0]
        for parent in ancestors(block, _PANEL_CLIMB):
            if parent in around:
                # beside the parsed results: a side block
                blocks.setdefault(block, []).append(row)
                break
            block = parent
    query = set(_WORDS.findall(_query(doc).lower()))
    for panel, held in sorted(blocks.items(), key=lambda kv: -len(kv[1])):
        if len(held) < 2:
            break
        title = _panel_title(panel, held[0][0], query)
        if title:
            facts: dict[str, str] = {}
            for _, label, value in held:
                facts.setdefault(label, value)
            return KnowledgePanel(title=title, description=_panel_prose(panel), facts=facts)
    return None


def _query(doc: _Element) -> str:
    """What was searched: the search box's value, else the page's title."""
    for value in doc.xpath('//*[@name="q"]/@value | //textarea[@name="q"]/text() | //title/text()'):
        if value.strip():
            return str(value)
    return ""


def _rows(doc: _Element) -> list[_Element]:
    """The "label: value" rows: an element whose first child's text ends with a colon (found
    from the page's texts that end with one: an XPath over every element's text is slow)."""
    rows: list[_Element] = []
    for node in _LABEL_ENDS(doc):
        el = node.getparent()
        if el is None:
            continue
        if node.is_tail:
            el = el.getparent()  # the colon follows an element: its row is its container's
        for _ in range(_ROW_CLIMB):
            parent = el.getparent() if el is not None else None
            if parent is None:
                break
            if len(parent) >= 2 and parent[0] is el and _text(el).endswith(":"):
                if not any(parent is row for row in rows):
                    rows.append(parent)
                break
            el = parent
    return rows


def _panel_title(panel: _Element, first: _Element, query: set[str]) -> str:
    """The heading above the facts that shares most words with the query; the first heading
    when none does."""
    titles: list[str] = []
    for el in panel.xpath(_HEADINGS):
        if el is first or inside(first, el):
            break  # a title is above the facts
        text = _text(el)
        if 0 < len(text) <= 100:
            titles.append(text)
    if not titles:
        return ""
    return max(titles, key=lambda t: len(set(_WORDS.findall(t.lower())) & query))


def _text(el: _Element) -> str:
    """An element's readable text: without its style sheets and scripts."""
    parts = el.xpath(".//text()[not(ancestor::style or ancestor::script)]")
    return SPACES.sub(" ", "".join(parts)).strip()


def _panel_prose(panel: _Element) -> str:
    """The panel's description: its first span of prose with no span inside."""
    for el in panel.iter("span"):
        text = _text(el)
        if len(text) > 60 and not el.xpath(".//span"):
            return text
    return ""
