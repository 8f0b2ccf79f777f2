"""Waiting for the screen to come to rest, bounded, where a screen test used to sleep.

Guards against a picture taken too early on a loaded machine: in a fresh clone's `make test`
at a load of 12, a "before" picture taken 0.8 s after a read lacked the highlight the stage
painted later, and differed from the "after" one by 10,902 pixels. Here a test waits for the
state it needs, the highlight's colour on the display and two grabs in a row alike (the
scroll's glide over, the page painted), and gives up after `REST_S`, leaving the judgement
to its own assertions.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

REST_S = 10.0  # the longest a test waits for the screen to come to rest
MARKED_PX = 1000  # pixels of the passage's highlight colour once it is painted
STILL_PX = 100  # pixels two grabs of a screen at rest may differ in (a caret, anti-aliasing)
_GAP_S = 0.1  # between two grabs: a few frames, so a glide still under way shows


def highlight_pixels(screen: np.ndarray) -> int:
    """Pixels of the passage's highlight colour (rgba(255, 221, 0, 0.55) over white or text)."""
    r, g, b = (screen[:, :, i].astype(int) for i in range(3))
    return int(((r > 225) & (g > 200) & (g < 250) & (b < 150)).sum())


def changed_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels that differ between two grabs of the same size (by more than a faint shade)."""
    return int((np.abs(a.astype(int) - b.astype(int)) > 20).any(axis=2).sum())


def at_rest(
    grab: Callable[[], np.ndarray], *, marked: bool = False, timeout: float = REST_S
) -> np.ndarray:
    """The screen once it is at rest: two grabs in a row alike and, when `marked`, the
    highlight painted on it; the last grab when `timeout` passes first."""
    until = time.monotonic() + timeout
    last = grab()
    while True:
        time.sleep(_GAP_S)
        now = grab()
        still = changed_pixels(last, now) <= STILL_PX
        if (still and (not marked or highlight_pixels(now) >= MARKED_PX)) or (
            time.monotonic() >= until
        ):
            return now
        last = now
