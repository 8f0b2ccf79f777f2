"""A web search engine on the broadcast tab: one record per engine, the live side of the
parsers' `Engine` (its parser, its wall detector): the results page's address for a query,
how to tell that address, how to answer its consent wall, and its rest after it refused.

The search itself (`google.web_search`) is written once, for every engine; Google and Bing
are two records, as httpx keeps its transports behind one interface.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from browser_core import Settings
from search.parsers._engine import Engine

ConsentAnswer = Callable[[Any, str], Awaitable[bool]]


@dataclass(frozen=True)
class LiveEngine:
    """A search engine the broadcast tab searches: `title` is what the brain and the
    audience call it; `results_url(query, settings)` its results page for a query."""

    name: str
    title: str
    parser: Engine
    results_url: Callable[[str, Settings], str]
    results_page: re.Pattern[str]
    answer_consent: ConsentAnswer

    def is_results(self, url: str) -> bool:
        """Whether `url` is this engine's results page."""
        return bool(self.results_page.match(url))


@dataclass
class Rest:
    """After an engine refused (its challenge, a consent wall that could not be passed), the
    searches that follow skip it for a while instead of showing its wall to the audience on
    every call (`SB_ENGINE_REST_MIN`); `clear` ends it (a person solved the challenge)."""

    until: float = 0.0  # time.time() when the rest ends
    why: str = ""
    since: float = 0.0
    history: list[str] = field(default_factory=list)

    def start(self, why: str, minutes: float) -> None:
        self.since, self.why = time.time(), why
        self.until = self.since + minutes * 60.0

    def active(self) -> bool:
        return time.time() < self.until

    def clear(self) -> None:
        self.until = 0.0

    def state(self) -> dict[str, Any]:
        """For `/v1/status` and the console: resting or not, since and until when, why."""
        if not self.active():
            return {"resting": False}
        return {
            "resting": True,
            "why": self.why,
            "since": _iso(self.since),
            "until": _iso(self.until),
        }


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")
