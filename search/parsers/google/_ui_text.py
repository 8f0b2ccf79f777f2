"""The words Google's interface puts around what a page says, by language: the AI Overview's
heading and its states, the controls and notes around it, and the "Read more" link that ends
a 2026 snippet. Text is the hook that survives Google's class-name churn; each table is
matched on text folded by `fold` (case, spaces).

Sources: the markup of real 2025-2026 results pages as public parsers document it (see
tests/fixtures/serp/overview/PROVENANCE.md); a phrase marked "unconfirmed" was not seen on a
saved page.
"""

from __future__ import annotations

import re
import unicodedata

_SPACE = re.compile(r"\s+")


def fold(text: str) -> str:
    """Compatibility-folded, case-folded, one space between words, no end punctuation."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", text).strip().rstrip(".:。").strip()


# The overview's heading (2025-2026) in the interface languages seen, and the 2024-2025
# Search Generative Experience's label.
OVERVIEW_HEADINGS = frozenset(
    fold(t)
    for t in (
        "AI Overview",
        "AI Overviews",
        "AI 개요",
        "AI による概要",
        "AIによる概要",
        "AI 摘要",
        "AI 概览",
        "Übersicht mit KI",
        "KI-Übersicht",
        "Vista creada con IA",
        "Visión general creada por IA",
        "Visão geral criada por IA",
        "Aperçu généré par l'IA",
        "Aperçu IA",
        "Panoramica IA",
        "AI-overzicht",
        "Обзор от ИИ",
        "Přehled od AI",
        "Przegląd od AI",
        "Prezentare generală generată de AI",
        "Generative AI is experimental",
        "Search Labs | AI Overview",
    )
)
# Whole-overview states that are no overview: not available for this search, cannot be made
# now, still being made. Matched as parts of a block's text.
OVERVIEW_STATES = (
    (
        "unavailable",
        re.compile(r"ai overview is not available|ai overviews? (are|is) not avail", re.I),
    ),
    ("unavailable", re.compile(r"AI 개요가 제공되지 않|AI 개요를 사용할 수 없")),
    ("unavailable", re.compile(r"AI による概要を表示できません|AIによる概要を表示できません")),
    ("error", re.compile(r"can.t generate an ai overview|couldn.t generate an ai overview", re.I)),
    ("error", re.compile(r"AI 개요를 생성할 수 없")),
    ("error", re.compile(r"AI による概要を生成できません|AIによる概要を生成できません")),
)
LOADING_WORDS = frozenset(
    fold(t)
    for t in (
        "Searching",
        "Generating",
        "Thinking",
        "Loading",
        "검색 중",
        "생성 중",
        "検索しています",
        "生成しています",
    )
)
# Blocks of interface text inside the overview: a block whose folded text is one of these,
# or starts with one of the prefixes, is not part of what the overview says.
OVERVIEW_UI_EXACT = frozenset(
    fold(t)
    for t in (
        "Show more",
        "Show less",
        "Show all",
        "Show more AI Overview",
        "Learn more",
        "More",
        "Listen",
        "Share",
        "Feedback",
        "Positive feedback",
        "Negative feedback",
        "Good response",
        "Bad response",
        "Thank you",
        "Close",
        "View related links",
        "About this result",
        "Explain this",
        "Related images",
        "Copy text",
        "Dive deeper in AI Mode",
        "AI Mode",
        "Ask anything",
        "더보기",
        "간략히 보기",
        "모두 표시",
        "자세히 알아보기",
        "AI 모드",
        "AI 모드에서 더 자세히 알아보기",
        "もっと見る",
        "すべて表示",
        "詳細",
        "AI モード",
        "AI モードで詳しく調べる",
    )
)
OVERVIEW_UI_PREFIXES = tuple(
    fold(t)
    for t in (
        "AI responses may include mistakes",
        "Generative AI is experimental",
        "Your feedback helps Google improve",
        "Access this menu with",
        "Share more feedback",
        "Report a problem",
        "AI 답변에 오류가 있을 수 있습니다",
        "AI の回答には間違いが含まれている場合があります",
        "AIの回答には間違いが含まれている場合があります",
    )
)
# The disclaimer and feedback row Google draws when an overview has finished streaming.
OVERVIEW_FOOTER = re.compile(
    r"AI responses may include mistakes|Generative AI is experimental|Positive feedback"
    r"|AI 답변에 오류가 있을 수 있습니다|AI の回答には間違いが含まれている場合があります",
    re.I,
)
# "Show more" on a collapsed overview (the stage clicks it as a person would).
SHOW_MORE = ("Show more", "더보기", "もっと見る", "Mehr anzeigen", "Ver más", "Mostrar mais")
# The title a source card's label ends with: "Opens in new tab" (ko, ja too).
_NEW_TAB = re.compile(
    r"[.,]?\s*(opens in new tab|새 탭에서 열립니다|新しいタブで開きます)\.?\s*$", re.I
)
# The link that ends a 2026 snippet (en seen; the others unconfirmed), and rating chrome.
READ_MORE = re.compile(
    r"(\s*[·…]?\s*(Read more|더보기|자세히 보기|続きを読む|もっと見る|Mehr lesen|Lire la suite"
    r"|Leer más|Ler mais|Leggi di più|Meer lezen|Czytaj więcej))+\s*$",
    re.I,
)
RATING = re.compile(
    r"^(Rating|평점|評価)\s*:?\s*[\d.,]+(\s*/\s*\d+)?\s*(\(\d[\d,.]*\)|·\s*[\d,.]+\s*\w+)?\s*[·‎-]*\s*",
    re.I,
)
MORE_RESULTS = re.compile(r"\s*More results from \S+\s*»?\s*$", re.I)


def source_title(label: str) -> str:
    """A source card's accessible label without "Opens in new tab"."""
    return _NEW_TAB.sub("", label).strip()


def overview_state(text: str) -> str | None:
    for state, pattern in OVERVIEW_STATES:
        if pattern.search(text):
            return state
    return None


_SITE_COUNT = re.compile(r"^\+?\d+\s*(sites?|websites?|件のサイト|개 사이트|개의 사이트)$")


def is_overview_ui(text: str) -> bool:
    folded = fold(text)
    return (
        folded in OVERVIEW_UI_EXACT
        or folded.startswith(OVERVIEW_UI_PREFIXES)
        or bool(_SITE_COUNT.match(folded))
    )


def clean_snippet(text: str) -> str:
    """A snippet without the interface text Google puts in it: "Read more", rating chrome,
    "More results from ..."."""
    head, tail = text[:-80], text[-80:]  # the interface text ends a snippet: look there only
    tail = READ_MORE.sub("", tail)
    if "esults from" in tail:
        tail = MORE_RESULTS.sub("", tail)
    text = head + tail
    return RATING.sub("", text).strip() if text[:1] in "R평評" else text.strip()
