"""The 2025-2026 blocks between the organic results that are not organic results: "What
people are saying" and "Discussions and forums" (posts: `discussions`), "Short videos"
(`short_videos`), "Top stories" (`top_stories`, in the layouts that give it no other mark),
"Things to know" (left out). Found by their heading's text; their links
are claimed, so they never join the organic results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lxml.etree import _Element

from .._models import SerpItem
from ._blocks import CLAIMED, block_of, headings
from ._carousels import items
from ._ui_text import fold

_FAMILIES = {
    "discussions": (
        "What people are saying",
        "Discussions and forums",
        "Perspectives",
        "Perspectives & opinions",
        "Questions & answers",
        "사람들의 의견",
        "토론 및 포럼",
        "ディスカッションとフォーラム",
        "みんなの意見",
    ),
    "short_videos": ("Short videos", "짧은 동영상", "ショート動画"),
    "top_stories": ("Top stories", "Schlagzeilen", "À la une", "Noticias destacadas", "주요 뉴스"),
    "left_out": ("Things to know", "Cosas que debes saber", "알아야 할 사항", "知っておくべきこと"),
}
_WANTED = {fold(text): family for family, texts in _FAMILIES.items() for text in texts}


def families(
    doc: _Element, base: str | None, *, texts: list[Any] | None = None
) -> dict[str, list[SerpItem]]:
    """Each family's entries, in page order; every such block is claimed."""
    found: dict[str, list[SerpItem]] = {"discussions": [], "short_videos": [], "top_stories": []}
    for heading in headings(doc, frozenset(_WANTED), texts=texts):
        family = _WANTED[fold(heading.text_content())]
        block = block_of(heading, _same_family(family))
        block.set(CLAIMED, family)
        if family in found:
            anchors = block.xpath(".//a[@href]")
            entries = items(anchors, base, exclude_video=family != "short_videos", claimed=family)
            found[family] += [e for e in entries if e not in found[family]]
    return found


def _same_family(family: str) -> Callable[[str], bool]:
    def same(text: str) -> bool:
        return _WANTED.get(fold(text)) == family

    return same
