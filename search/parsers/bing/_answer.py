"""The boxes that answer on the page itself: the answer above the results (a computed or
looked-up value in `.b_focusText*`, or a featured passage `.rwrl`), the entity panel in the
side column (`#b_context`), and the "People also ask" questions (`RelatedQnA.Item`)."""

from __future__ import annotations

from lxml.etree import _Element

from .._dom import text_of
from .._models import KnowledgePanel

_PAA_ITEM = '[@data-tag="RelatedQnA.Item"]'
_ANSWER_XPATHS = (
    '//*[contains(@class,"b_focusTextLarge")]',
    '//*[contains(@class,"b_focusTextMedium")]',
    '//*[contains(@class,"b_focusTextSmall")]',
    '//li[contains(concat(" ", @class, " "), " b_ans ")]'
    '//*[contains(concat(" ", @class, " "), " rwrl ")]',
)
_PANEL = (
    '//*[@id="b_context"]//*[contains(concat(" ", @class, " "), " b_entityTP ")]'
    '[.//*[contains(concat(" ", @class, " "), " b_entityTitle ")]]'
)

# The panel's description, else its subtitle ("Bird", "Common brand names: ...").
_DESCRIPTIONS = (
    './/*[contains(@class,"b_snippet")]',
    './/*[contains(@class,"b_paractl")]',
    './/*[contains(@class,"b_entitySubTitle")]',
)


def answer_box(doc: _Element) -> str | None:
    """The answer Bing puts above the results (answers inside "People also ask" do not count)."""
    for xpath in _ANSWER_XPATHS:
        for el in doc.xpath(xpath):
            text = text_of(el)
            if text and not el.xpath(f"ancestor::*{_PAA_ITEM}"):
                return text
    return None


def knowledge_panel(doc: _Element) -> KnowledgePanel | None:
    """The entity panel: its title, its description (else its subtitle), its labelled facts."""
    for panel in doc.xpath(_PANEL):
        title = text_of(panel.xpath('.//*[contains(@class,"b_entityTitle")]')[0])
        if not title:
            continue
        described = (text_of(el) for name in _DESCRIPTIONS for el in panel.xpath(name))
        description = next((t for t in described if t), "")
        return KnowledgePanel(title=title, description=description, facts=_facts(panel))
    return None


def _facts(panel: _Element) -> dict[str, str]:
    """`Label: value` rows of the panel's lists (the label in `span.cbl`)."""
    facts: dict[str, str] = {}
    for row in panel.xpath('.//li[span[contains(@class,"cbl")]]'):
        label = text_of(row.xpath('span[contains(@class,"cbl")]')[0])
        value = text_of(row)[len(label) :].strip()
        label = label.rstrip(": ").strip()
        if label and value and label not in facts:
            facts[label] = value
    return facts


def people_also_ask(doc: _Element) -> list[str]:
    questions: list[str] = []
    for item in doc.xpath(f"//*{_PAA_ITEM}"):
        text = item.get("data-query") or text_of(item)[:200]
        if text and text not in questions:
            questions.append(text)
    return questions
