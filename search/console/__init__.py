"""The console: `/console` on the service, the page the person running the stream opens in
their own browser (the broadcast tab live, the queue, the recent calls with their envelopes
and screenshots, the egress refusals).

One module a concern: `_ring` (what is kept, bounded), `_frames` (pictures of the broadcast
tab over a CDP socket of their own), `_web` (the sign-in, the checks against other sites,
the security headers), `_console` (the object the service tells of each call, and its data
endpoints). The page itself is `static/`: one HTML file, one script, one style sheet.
"""

from ._console import Console
from ._ring import CALLS_KEPT, SHOTS_KEPT, CallRecord, Ring
from ._web import COOKIE, CSP, PREFIX, is_console_path

__all__ = [
    "CALLS_KEPT",
    "COOKIE",
    "CSP",
    "PREFIX",
    "SHOTS_KEPT",
    "CallRecord",
    "Console",
    "Ring",
    "is_console_path",
]
