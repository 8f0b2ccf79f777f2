"""Page HTML in, main text and metadata out (`Article`), with trafilatura and a plain fallback.

Settings were chosen on the scrapinghub article-extraction benchmark (see bench/extract.py):
precision favoured, tables kept, link text kept, comments dropped. When trafilatura finds
nothing (a tiny or unusual page) the visible body text is returned instead, so a read never
comes back empty because of the extractor.
"""

from __future__ import annotations

import re
from typing import Any

import lxml.html
import structlog
import trafilatura
from lxml.etree import ParserError

from ._models import Article

__all__ = ["EXTRACT_OPTIONS", "extract_article", "visible_text"]

log = structlog.get_logger(__name__)

EXTRACT_OPTIONS: dict[str, Any] = {
    "include_comments": False,
    "include_tables": True,
    "include_links": False,
    "include_images": False,
    "favor_precision": True,
    "favor_recall": False,
    "deduplicate": False,
}
_INVISIBLE = (
    "script",
    "style",
    "noscript",
    "nav",
    "header",
    "footer",
    "template",
    "svg",
    "iframe",
    "form",
    "aside",
)
_BLANK_LINES = re.compile(r"\n\s*\n+")


def extract_article(html: str, url: str | None = None, *, max_chars: int | None = None) -> Article:
    """The main text of a page (cut to `max_chars`) with title, author, date and language."""
    doc: Any = None
    try:
        doc = trafilatura.bare_extraction(html, url=url, with_metadata=True, **EXTRACT_OPTIONS)
    except (ValueError, TypeError, ParserError) as exc:  # malformed markup: fall back below
        log.warning("article.extractor_failed", url=url, error=str(exc))
    data: dict[str, Any] = doc.as_dict() if doc is not None and hasattr(doc, "as_dict") else {}
    text = (data.get("text") or "").strip()
    if not text:
        text = visible_text(html)
        log.info("article.fallback_visible_text", url=url, chars=len(text))
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars].rstrip()
    return Article(
        title=data.get("title") or _html_title(html),
        author=data.get("author"),
        date=data.get("date"),
        language=data.get("language"),
        text=text,
        word_count=len(text.split()),
    )


def visible_text(html: str) -> str:
    """Body text without scripts, styles, navigation and forms, one block per line."""
    root = _parse(html)
    if root is None:
        return ""
    for el in root.xpath("//" + " | //".join(_INVISIBLE)):
        el.drop_tree()
    body = root.find("body")
    lines = (" ".join(line.split()) for line in (body if body is not None else root).itertext())
    return _BLANK_LINES.sub("\n", "\n".join(line for line in lines if line)).strip()


def _html_title(html: str) -> str | None:
    root = _parse(html)
    title = root.findtext(".//title") if root is not None else None
    return " ".join(title.split()) or None if title else None


def _parse(html: str) -> Any:
    if not html.strip():
        return None
    try:
        return lxml.html.fromstring(html)
    except (ParserError, ValueError):
        return None
