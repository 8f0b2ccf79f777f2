"""The stage: what the audience of the broadcast sees, decided in one place.

Applied to the owned tab every time the driver takes it (and when it attaches after a restart),
bounded in time, never delaying an answer by more than 100 ms. Providers say what they want
shown ("this passage", "this result", "this player"); the stage does it.

- `_screen`: a clean screen (dialogs, downloads, print, HTTP sign-in, external protocols,
  sound, the window and its one tab).
- `_consent`: consent banners answered on the visible page (DuckDuckGo's autoconsent rules).
- `_fonts`: every script the audience reads renders (Hangul, kana, Han).
- `_focus`: the screen follows the answer (scroll to and highlight the spoken passage, the
  opened result, the player in theater mode); `_caption`: an optional caption of what the
  assistant does. These run after the answer is handed back, on the tab the driver still
  holds for them (`Driver.run(..., show=...)`).
- `_expand`: a block the page shows cut off ("Show more") opened by its own control, clicked.
- `_covers`: nothing the page draws covers the passage (room for its bars when scrolling;
  overlays, dialogs, sheets and their scroll lock taken off by a stylesheet of ours, also
  late ones, watched for in the background after the answer).
"""

from ._caption import caption_for, show_caption
from ._consent import consent_check, consent_problem, install_consent
from ._expand import expand_near
from ._focus import (
    BUDGET_S,
    CAP_S,
    CONTEXT,
    PASSAGE,
    RESULT,
    bounded,
    drain,
    finish,
    passage_paragraphs,
    prepare,
    show_neutral,
    show_passage,
    show_player,
    show_result,
    start,
)
from ._fonts import FontCheck, cached_font_check, check_fonts

__all__ = [
    "BUDGET_S",
    "CAP_S",
    "CONTEXT",
    "PASSAGE",
    "RESULT",
    "FontCheck",
    "bounded",
    "cached_font_check",
    "caption_for",
    "check_fonts",
    "consent_check",
    "consent_problem",
    "drain",
    "expand_near",
    "finish",
    "install_consent",
    "passage_paragraphs",
    "prepare",
    "show_caption",
    "show_neutral",
    "show_passage",
    "show_player",
    "show_result",
    "start",
]
