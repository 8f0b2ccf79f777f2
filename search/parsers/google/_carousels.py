"""The carousels beside the organic results: top stories and videos, each entry's title,
address and source."""

from __future__ import annotations

from collections.abc import Iterable

from lxml.etree import _Element

from .._dom import text_of
from .._models import SerpItem
from ._blocks import CLAIMED
from ._urls import clean_google_url


def top_stories(doc: _Element, base: str | None) -> list[SerpItem]:
    anchors = doc.xpath(
        '//g-section-with-header//a[.//*[@role="heading"]]'
        ' | //a[contains(@class,"WlydOe")]'
        ' | //g-inner-card//a[.//*[@role="heading"]]'
    )
    return items(anchors, base, exclude_video=True)


def videos(doc: _Element, base: str | None) -> list[SerpItem]:
    anchors = doc.xpath(
        '//video-voyager//a[@href] | //*[@data-vid]//a[@href] | //a[contains(@class,"X5OiLe")]'
        ' | //g-scrolling-carousel//a[contains(@href,"youtube.com/watch")]'
    )
    return [item for item in items(anchors, base, exclude_video=False) if is_video(item.url)]


def is_video(url: str) -> bool:
    return any(host in url for host in ("youtube.com/", "youtu.be/", "vimeo.com/", "/video"))


def items(
    anchors: Iterable[_Element],
    base: str | None,
    *,
    exclude_video: bool,
    claimed: str | None = None,
) -> list[SerpItem]:
    """The entries of a carousel; links inside a block another family claimed are left out
    (`claimed`: the family asking for its own)."""
    found: list[SerpItem] = []
    seen: set[str] = set()
    for anchor in anchors:
        if anchor.xpath(f"ancestor::*[@{CLAIMED}]") and claimed is None:
            continue  # a forum post, an overview's source: not a story or a video
        url = clean_google_url(anchor.get("href", ""), base)
        if url is None or url in seen or (exclude_video and is_video(url)):
            continue
        headings = anchor.xpath(
            './/*[@role="heading"] | .//h3 | .//*[contains(@class,"cHaqb")]'
            ' | .//*[contains(@class,"fc9yUc")]'
        )
        title = text_of(headings[0]) if headings else text_of(anchor)
        if not title:
            continue
        seen.add(url)
        found.append(SerpItem(title=title, url=url, source=_source(anchor)))
    return found


def _source(anchor: _Element) -> str:
    for el in anchor.xpath(
        './/*[contains(@class,"CEMjEf") or contains(@class,"MgUUmf")'
        ' or contains(@class,"NUnG9d") or contains(@class,"pcJO7e")]'
    ):
        text = text_of(el)
        if text:
            return text
    return ""
