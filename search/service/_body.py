"""What a request body may be: at most `MAX_BODY_BYTES`, one JSON value no deeper than
`MAX_JSON_DEPTH`, valid Unicode. Checked by the access guard before any parser recurses into
the body or any log line or answer must encode it."""

from __future__ import annotations

import json
import re
from typing import Any

MAX_BODY_BYTES = 64 * 1024
MAX_JSON_DEPTH = 64  # a tool call nests 4 deep; Python's parser recurses per level
BODY_FIX = f"send one JSON object, UTF-8, at most {MAX_JSON_DEPTH} levels deep"
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")


def body_problem(raw: bytes) -> str | None:
    """What is wrong with a JSON body (not JSON, nested too deep, not valid Unicode), or None."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub(b"", raw)):
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_JSON_DEPTH:
        return f"the JSON body nests deeper than {MAX_JSON_DEPTH} levels"
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return f"the body is not JSON ({type(exc).__name__}: {str(exc)[:80]})"
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "the JSON body is not valid Unicode (a lone surrogate such as \\ud83d)"
    return None


async def read_bounded(receive: Any) -> bytes | None:
    """The whole body of an ASGI request, or None once it passes `MAX_BODY_BYTES`."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)
