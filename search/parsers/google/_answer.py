"""The boxes that answer on the page itself: the direct answer or featured snippet, the
knowledge panel beside the results, and the "People also ask" questions."""

from __future__ import annotations

from lxml.etree import _Element

from .._dom import text_of
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
    return _list_answer(doc)


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
        return None
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
