"""Google's AI Overview on the live results page: waited for while it streams in (bounded),
put first in what the brain hears (labelled as Google's AI-generated text, its sentences
chosen for the question like any passage), and shown to the audience: expanded as a person
would expand it, the sentences handed to the brain highlighted.

The overview is read from the page with the same parser as a saved page (`parse_overview`):
the page hands over only the overview's block, found by its heading.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog
from playwright.async_api import Error as PlaywrightError

from browser_core import Deadline, Settings
from browser_core.stage import expand_near, show_passage
from search._passages import select
from search.parsers._dom import document
from search.parsers._models import AiOverview, SerpPage
from search.parsers.google._overview import parse_overview
from search.parsers.google._ui_text import OVERVIEW_HEADINGS, SHOW_MORE

log = structlog.get_logger(__name__)

POLL_S = 0.2
# A complete overview without Google's closing disclaimer counts as finished once its text
# has not changed for this long.
STABLE_S = 0.8
LABEL = "Google's AI Overview (written by Google's AI, not a quote of any source; it may be wrong)"
# The overview's block on the live page: the outermost ancestor of its heading (not one inside
# a "People also ask" answer) that holds no organic result and no results container (the
# parser narrows it down from there).
_PROBE_JS = r"""(headings) => {
  const fold = (s) => s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim()
    .replace(/[.:。]+$/, '').trim();
  const walker = document.createTreeWalker(document.body || document.documentElement,
                                           NodeFilter.SHOW_TEXT);
  let heading = null;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const t = n.nodeValue;
    // an overview quoted in a "People also ask" answer is not the page's own
    if (t.length <= 80 && headings.includes(fold(t)) && n.parentElement &&
        !n.parentElement.closest('[data-q], .related-question-pair, [data-initq]')) {
      heading = n.parentElement; break;
    }
  }
  if (!heading) return null;
  const stops = new Set(['rso', 'search', 'center_col', 'rcnt', 'main', 'cnt', 'rhs', 'res']);
  let node = heading;
  for (let i = 0; i < 14; i++) {
    const up = node.parentElement;
    if (!up || up === document.body || stops.has(up.id) || up.querySelector('a[href] h3, #rso'))
      break;
    node = up;
  }
  const html = node.outerHTML;
  return html.length > 4000000 ? null : html;
}"""


def overview_pending(serp: SerpPage) -> bool:
    """The results page shows an overview still being written (or only its placeholder)."""
    if serp.ai_overview is not None:
        return not serp.ai_overview.complete
    return serp.ai_overview_state == "loading"


async def probe(page: Any) -> tuple[AiOverview | None, str | None]:
    """The overview as the live page shows it now, parsed like a saved page."""
    html = await page.evaluate(_PROBE_JS, sorted(OVERVIEW_HEADINGS))
    if not html:
        return None, None
    doc = await asyncio.to_thread(document, f"<html><body>{html}</body></html>")
    if doc is None:
        return None, None
    return await asyncio.to_thread(parse_overview, doc, page.url)


async def await_overview(page: Any, serp: SerpPage, settings: Settings, deadline: Deadline) -> None:
    """Wait, within `SB_GOOGLE_OVERVIEW_WAIT_S` and what the deadline can spare (`reserve_s`
    kept), for an overview still streaming in; `serp` then holds it complete, or says in
    `ai_overview_note` that it was still loading and the answer went without it."""
    if not overview_pending(serp):
        return
    budget = min(settings.google_overview_wait_s, max(deadline.remaining() - 2.0, 0.0))
    started = time.monotonic()
    seen, since = "", started
    overview, state = serp.ai_overview, serp.ai_overview_state
    while True:
        try:
            overview, state = await probe(page)
        except PlaywrightError as exc:  # the page moved on: what was read so far stands
            log.info("google.overview_probe_failed", error=str(exc)[:200])
            break
        now = time.monotonic()
        text = overview.text if overview else ""
        if text != seen:
            seen, since = text, now
        if state in ("unavailable", "error"):
            break
        if overview and overview.complete and (overview.footer or now - since >= STABLE_S):
            break
        if now - started >= budget:
            break
        await asyncio.sleep(POLL_S)
    _settle(serp, overview, state, time.monotonic() - started, budget)


def _settle(
    serp: SerpPage, overview: AiOverview | None, state: str | None, waited: float, budget: float
) -> None:
    serp.ai_overview_waited_ms = round(waited * 1000)
    finished = overview is not None and overview.complete and state == "ready"
    if overview is not None and not finished:
        overview = overview.model_copy(update={"complete": False})
    serp.ai_overview, serp.ai_overview_state = overview, state
    if not finished and state not in ("unavailable", "error"):
        serp.ai_overview_note = (
            f"Google's AI Overview was still loading after {budget:.1f} s; "
            "the answer went without it"
        )
    log.info(
        "google.overview_waited",
        waited_ms=serp.ai_overview_waited_ms,
        state=state,
        complete=finished,
    )


def overview_ready(serp: SerpPage) -> bool:
    return serp.ai_overview is not None and serp.ai_overview.complete


def overview_text(serp: SerpPage, question: str, budget: int) -> tuple[str, list[str], int]:
    """What the brain hears of the overview (all of it within the budget, else its sentences
    that answer the question, gaps marked), the paragraphs of it the stage marks (those the
    brain heard), and which of them holds the best sentence (marked strongly)."""
    overview = serp.ai_overview
    if overview is None:
        return "", [], 0
    chosen = select(overview.text, question, budget)
    heard = [p for p in overview.paragraphs if p in chosen.text] or overview.paragraphs[:1]
    top = chosen.highlights[0].text(overview.text) if chosen.highlights else ""
    best = next((i for i, p in enumerate(heard) if top and top in p), 0)
    return chosen.text, heard, best


async def show_overview(
    page: Any, shown: list[str], best: int = 0, *, budget_s: float | None = None
) -> Any:
    """The audience's view of the overview: opened by its own "Show more" control when it is
    cut off (a click, as a person's), then what the brain heard highlighted (`shown[best]`
    strongly, the rest lightly) and scrolled into view."""
    if not shown:
        return None
    await expand_near(page, shown[0], SHOW_MORE, budget_s=budget_s)
    return await show_passage(page, shown, best, budget_s=budget_s)
