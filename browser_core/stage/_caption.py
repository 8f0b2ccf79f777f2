"""An optional caption of what the assistant does ("Searching: ...", "Reading: site",
"Playing: ..."), off unless `SB_CAPTION=true`.

Our words only: the text is made here from the request (the query, the host of the URL; for
`play` the words asked for, never the video's own title), stripped of control and
direction-changing characters, cut short, and set with `textContent` (never parsed as HTML)
inside a CLOSED shadow root created from our isolated world, so the page's scripts cannot
read or rewrite it. Its host element is the one trace in
the page's DOM (a MutationObserver of the page sees it added), which is why it is opt-in.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any
from urllib.parse import urlsplit

from .._settings import Settings
from ._focus import BUDGET_S, CAP_S, bounded, in_world, on_page

TAG = "stream-browser-caption"
MAX_CHARS = 80
_HOST_STYLE = (
    "all: initial !important; position: fixed !important; left: 16px !important;"
    " bottom: 16px !important; z-index: 2147483647 !important; pointer-events: none !important;"
    " display: block !important; contain: layout style paint !important"
)
_LABEL_STYLE = (
    "font: 600 18px/1.35 system-ui, 'Noto Sans', 'Noto Sans CJK KR', sans-serif; color: #fff;"
    " background: rgba(16, 16, 16, 0.8); padding: 8px 14px; border-radius: 8px;"
    " max-width: 60vw; white-space: nowrap; overflow: hidden; text-overflow: ellipsis;"
)
_CAPTION_JS = r"""({text, tag, hostStyle, labelStyle}) => {
  let state = globalThis.__streamBrowserCaption;
  if (!state || !state.host.isConnected) {
    for (const old of document.querySelectorAll(tag)) old.remove();  // an older world's
    const host = document.createElement(tag);
    host.setAttribute('style', hostStyle);
    const root = host.attachShadow({mode: 'closed'});
    const label = document.createElement('div');
    label.setAttribute('style', labelStyle);
    root.append(label);
    document.documentElement.appendChild(host);
    state = globalThis.__streamBrowserCaption = {host, label};
  }
  state.label.textContent = text;
  return {shown: text};
}"""
# Control characters, and the bidi controls that could reorder what the audience reads.
_UNSAFE = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]")


def clean(text: str, limit: int = MAX_CHARS) -> str:
    """One line of plain text, no control or direction characters, at most `limit` chars."""
    kept = "".join(
        " " if unicodedata.category(c).startswith("C") else c for c in _UNSAFE.sub("", text)
    )
    line = " ".join(kept.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "\u2026"


def caption_for(action: str, subject: str) -> str:
    """The caption for an action: the query searched, the site read, the title played."""
    if action == "read":
        host = urlsplit(subject).hostname or subject
        return clean(f"Reading: {host.removeprefix('www.')}")
    label = {"search": "Searching", "play": "Playing"}.get(action, action.capitalize())
    return clean(f"{label}: {subject}")


async def _write(page: Any, text: str) -> Any:
    arg = {"text": text, "tag": TAG, "hostStyle": _HOST_STYLE, "labelStyle": _LABEL_STYLE}
    return await in_world(page, _CAPTION_JS, arg)


async def show_caption(
    page: Any,
    action: str,
    subject: str,
    settings: Settings,
    *,
    budget_s: float | None = BUDGET_S,
) -> Any:
    """Say on screen what the assistant does (only with `SB_CAPTION=true`; else nothing)."""
    if not settings.caption or not subject:
        return None
    step = _write(page, caption_for(action, subject))
    # After the answer, or beside other work (the player's): no answer waits on it.
    if budget_s is None or budget_s >= CAP_S:
        return await bounded("caption", step, budget_s)
    return await on_page("caption", page, step, budget_s)
