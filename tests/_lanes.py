"""The serial tests' two lanes for `make test` (`-n 2 --dist loadgroup -m serial`): what the
screen shows (pictures, the stage's time-bounded work) in one worker, what holds a deadline or
counts memory in the other, each lane's tests one at a time beside the other's.

xdist's own `loadgroup` groups by a suffix it writes into each test's node id (`@lane`, from
the `xdist_group` mark); pytest 9.2 keeps node ids in a structured form that no longer takes
that write (pytest-dev/pytest-xdist#1386), so every serial test was dealt out on its own: two
screen modules ran at once, each starting an Xvfb on the same free display number, and a
screen picture was taken while the other lane loaded the machine. Here the lane is decided
from the node id's file, which does not depend on that write.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def lane_of(nodeid: str, screen_files: Collection[str]) -> str:
    """A serial test's lane: `screen` for the screen files' tests, `timed` for the rest."""
    return "screen" if nodeid.split("::", 1)[0] in screen_files else "timed"


def lane_scheduler(screen_files: Collection[str]) -> type[Any]:
    """xdist's scope scheduler with one scope a lane (a scope runs on one worker, in order);
    xdist is imported here, so a pytest without it still loads the conftest."""
    from xdist.scheduler import LoadScopeScheduling

    class LaneScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return lane_of(nodeid, screen_files)

    return LaneScheduling


def make_lane_scheduler(config: Any, log: Any, screen_files: Collection[str]) -> Any:
    """For `--dist loadgroup` (the serial part of `make test`), the lanes; else xdist's own."""
    if config.getoption("dist", None) != "loadgroup":
        return None
    return lane_scheduler(screen_files)(config, log)
