"""The driver: the broadcast Chrome attached over CDP, one owned tab, one operation at a time.

A read goes down through these rooms and back, each calling only the ones below it:

- `_driver`: `Driver`, the short orchestration the tool calls (`run`, `navigate`, `close`).
- `_turn`: whose turn it is on the tab (a FIFO lock, then a file lock across processes:
  `_tab_lock`), within the call's deadline (`_deadline`), and the stage's hold on the tab
  after the answer is handed back (at most `STAGE_HOLD_S`).
- `_connection`: attaching to Chrome (bounded tries, backoff), dropping, recycling every
  `RECYCLE_OPS` operations; Chrome's health between calls and its probe (`_health`); the
  driver's own raw CDP socket beside Playwright's, for the early body (`_cdp_channel`).
- `_owned_tab`: the one tab we own, found by its saved id (`_tab_record`), adopted or
  opened, replaced over HTTP when stuck or wedged, with the spares that leaves
  (`_spare_tabs`); `_page_guards`: what every owned page gets (dialogs answered, popups
  closed, downloads cancelled, the route and Fetch guards, the stage's clean screen).
- `_navigation`: `goto` under the navigation policy, redirects checked, the early body
  (`_early_body`), the settle; `_document`: the page's HTML once parsed.
- `_recovery`: after a timeout or a lost connection, the tab or the connection put right
  and the error the caller gets; `_playwright_errors`: what a Playwright error means.
"""

from ._deadline import Deadline
from ._document import document_html
from ._driver import Driver
from ._navigation import NavOutcome
from ._peek import Peeked

__all__ = ["Deadline", "Driver", "NavOutcome", "Peeked", "document_html"]
