"""Parts of a results page Google sends as escaped HTML in inline scripts
(`window.jsl.dh('id', '\\x3cdiv ...')`), which a browser inserts into the element of that id
as the page loads: the 2025 overview's text and disclaimer arrive this way. A response body
read before any script ran (the live search parses it at once) holds them only there."""

from __future__ import annotations

import re

import lxml.html
from lxml.etree import ParserError, _Element

_CALL = re.compile(
    r"""jsl\.dh\(\s*(['"])([\w:.-]+)\1\s*,\s*"""
    r"""(?:'((?:[^'\\]++|\\.)*+)'|"((?:[^"\\]++|\\.)*+)")""",
    re.S,
)
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", re.S)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unescape(js: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xu" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _SIMPLE.get(code, code)

    return _ESCAPE.sub(one, js)


def insert_deferred(doc: _Element, html: str, within: list[_Element]) -> int:
    """Insert each deferred part meant for an element inside one of the blocks `within`
    when that element is still empty (a rendered page already holds them); how many were."""
    if "jsl.dh(" not in html or not within:
        return 0
    targets = {str(el.get("id")): el for block in within for el in block.iter() if el.get("id")}
    inserted = 0
    for script in doc.iter("script"):
        code = script.text or ""
        if "jsl.dh(" not in code:
            continue
        for match in _CALL.finditer(code):
            target = targets.get(match.group(2))
            if target is not None and not len(target) and not (target.text or "").strip():
                fragment = match.group(3) if match.group(3) is not None else match.group(4)
                inserted += _insert(target, _unescape(fragment or ""))
    return inserted


def _insert(target: _Element, fragment: str) -> int:
    try:
        parts = lxml.html.fragments_fromstring(fragment)
    except (ParserError, ValueError):
        return 0
    for part in parts:
        if isinstance(part, str):
            target.text = (target.text or "") + part
        else:
            target.append(part)
    return 1
