"""The parsed Gemini answer (text, sources, search queries, citations) and its rendering.

Citations come from `groundingSupports`, whose offsets are UTF-8 *byte* offsets into the
answer: rendering works on the encoded bytes so non-ASCII text does not shift the markers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from browser_core import Source

AuthMode = Literal["oauth", "apikey"]
_URL = re.compile(r"https?://[^\s<>\"'`\]}]+")
_URL_TRAILING = ".,;:!?*_"


class Citation(BaseModel):
    """A span of the answer ([start, end) in UTF-8 bytes) backed by `sources[i]` for each i."""

    model_config = ConfigDict(frozen=True)

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    source_indices: tuple[int, ...] = ()


class GeminiAnswer(BaseModel):
    """One grounded answer from either transport."""

    model_config = ConfigDict(frozen=True)

    text: str
    sources: list[Source] = Field(default_factory=list)
    search_queries: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    model: str | None = None
    auth: AuthMode


def _char_boundary(data: bytes, offset: int) -> int:
    """Clamp `offset` into `data` and move it forward off any UTF-8 continuation byte."""
    offset = max(0, min(offset, len(data)))
    while offset < len(data) and data[offset] & 0xC0 == 0x80:
        offset += 1
    return offset


def _markers(citations: Iterable[Citation], n_sources: int) -> dict[int, list[int]]:
    """Byte offset -> 1-based reference numbers to insert there (deduplicated, in order)."""
    at: dict[int, list[int]] = {}
    for citation in citations:
        numbers = at.setdefault(citation.end, [])
        for index in citation.source_indices:
            if 0 <= index < n_sources and index + 1 not in numbers:
                numbers.append(index + 1)
    return {offset: numbers for offset, numbers in at.items() if numbers}


def cite_text(text: str, citations: Iterable[Citation], n_sources: int) -> str:
    """Insert "[1][2]" after each cited segment, placing markers at UTF-8 byte offsets."""
    data = text.encode("utf-8")
    inserts: dict[int, list[int]] = {}
    for offset, numbers in _markers(citations, n_sources).items():
        inserts.setdefault(_char_boundary(data, offset), []).extend(numbers)
    out, last = bytearray(), 0
    for offset in sorted(inserts):
        out += data[last:offset]
        out += "".join(f"[{n}]" for n in dict.fromkeys(inserts[offset])).encode()
        last = offset
    out += data[last:]
    return out.decode("utf-8")


def render_answer(answer: GeminiAnswer) -> str:
    """The reply text with numbered references, then a "Sources:" list."""
    body = cite_text(answer.text, answer.citations, len(answer.sources)).strip()
    if not answer.sources:
        return body
    lines = [
        f"[{i}] {s.title} - {s.url}" if s.title else f"[{i}] {s.url}"
        for i, s in enumerate(answer.sources, start=1)
    ]
    return body + "\n\nSources:\n" + "\n".join(lines)


def _trim_url(url: str) -> str:
    """Drop trailing punctuation and a closing parenthesis that the URL did not open."""
    while url and (
        url[-1] in _URL_TRAILING or (url[-1] == ")" and url.count(")") > url.count("("))
    ):
        url = url[:-1]
    return url


def urls_in_text(text: str) -> list[Source]:
    """Sources for a plain-text answer (the CLI's JSON has no structured grounding)."""
    seen: dict[str, Source] = {}
    for match in _URL.finditer(text):
        url = _trim_url(match.group(0))
        host = urlsplit(url).hostname or ""
        if host and url not in seen:
            seen[url] = Source(title=host.removeprefix("www."), url=url)
    return list(seen.values())
