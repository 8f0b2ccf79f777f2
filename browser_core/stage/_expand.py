"""A block the page shows cut off ("Show more") opened as a person opens it: its own control,
the nearest one to the passage the assistant speaks from, clicked with the mouse, so the
audience sees the block open and the page's own script does the opening (never our style
forcing it open, which the page would not know about).

Bounded like every step of the stage; a page with no such control, or one that does not
open, is left as it is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import structlog

from ._focus import CAP_S, bounded, in_world

log = structlog.get_logger("browser_core.stage")

_OPEN_WAIT_S = 1.5
# The control nearest the passage (in the passage's ancestors, closest first) that says it is
# closed (aria-expanded="false") or is named by one of `labels`; scrolled into view; where to
# click it. `check`: only whether that control is still closed.
_FIND_JS = r"""({text, labels, check}) => {
  const fold = (s) => (s || '').normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
  const names = labels.map(fold);
  const pieces = (text || '').normalize('NFKC').replace(/\s+/g, ' ').split(/["']/);
  const want = pieces.reduce((a, b) => (b.trim().length > a.length ? b.trim() : a), '')
    .slice(0, 60).trim();
  if (want.length < 4) return null;
  const found = document.evaluate(`//*[contains(normalize-space(.), "${want}")]`,
    document.body, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
  if (!found.snapshotLength) return null;
  let passage = found.snapshotItem(found.snapshotLength - 1);
  for (let i = 0; i + 1 < found.snapshotLength; i++) {  // the first match with none inside
    if (!found.snapshotItem(i).contains(found.snapshotItem(i + 1))) {
      passage = found.snapshotItem(i); break;
    }
  }
  const named = (el) => {
    const own = fold(el.getAttribute('aria-label')) + ' ' + fold(el.textContent);
    return names.some((n) => own.trim() === n || own.trim().startsWith(n + ' ')
                           || fold(el.textContent) === n);
  };
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  let control = null;
  for (let up = passage, i = 0; up && up !== document.body && i < 12 && !control;
       up = up.parentElement, i++) {
    for (const el of up.querySelectorAll('[aria-expanded="false"], [role="button"], button')) {
      if (el.contains(passage) || !shown(el)) continue;
      if (el.getAttribute('aria-expanded') === 'false' || named(el)) { control = el; break; }
    }
  }
  if (!control) return check ? {closed: false} : null;
  if (check) return {closed: control.getAttribute('aria-expanded') !== 'true' && shown(control)};
  control.scrollIntoView({block: 'center', behavior: 'instant'});
  const r = control.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2};
}"""


async def expand_near(
    page: Any, text: str, labels: Sequence[str], *, budget_s: float | None = None
) -> bool:
    """Open the cut-off block holding `text` by clicking its own control (named by one of
    `labels`, or marked `aria-expanded="false"`); whether a control was clicked."""
    return bool(await bounded("expand", _expand(page, text, list(labels)), budget_s))


async def _expand(page: Any, text: str, labels: list[str]) -> bool:
    arg = {"text": text, "labels": labels, "check": False}
    where = await in_world(page, _FIND_JS, arg)
    if not where:
        return False
    await page.mouse.click(where["x"], where["y"])
    log.info("stage.expanded", x=round(where["x"]), y=round(where["y"]))
    started = time.monotonic()
    while time.monotonic() - started < min(_OPEN_WAIT_S, CAP_S):
        state = await in_world(page, _FIND_JS, {**arg, "check": True})
        if not state or not state.get("closed"):
            break
        await asyncio.sleep(0.1)
    return True
