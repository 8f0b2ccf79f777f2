"""What a search engine's parse health does after a call: a suspect results page is said
everywhere a person looks (the log's `serp.suspect`, the console's alert, `/v1/status`, the
metrics) and kept as a case (`search/_cases.py`); an ok one clears the engine's alert.

Guards against a parser that silently stopped reading the page: Google reshapes its results
page several times a year, and a parse that misses results still answers something.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

import structlog

from browser_core import Settings

from ._alerts import Alerts
from ._cases import CaseKeeper, CaseStore, Evidence, safe_url

log = structlog.get_logger("search.health")


class ParseWatch:
    """Told of each results page the engines parsed in a call (`observe`); counts them by
    health for the metrics and keeps the suspect ones, and the recovered ones (read whole from
    the page's structure when its markup found too few results: a fix is due before the next
    change makes them suspect)."""

    def __init__(self, settings: Settings, alerts: Alerts) -> None:
        self.alerts = alerts
        self.cases = CaseStore.for_settings(settings)
        self.keeper = CaseKeeper(self.cases, on_saved=alerts.note_case)
        self._counts: dict[tuple[str, str], int] = {}
        self._last: dict[str, str] = {}
        self._lock = threading.Lock()

    def observe(self, providers: Iterable[Any]) -> None:
        """Take the parse each engine provider of the call kept (`take_parsed`), if any."""
        for provider in providers:
            take = getattr(provider, "take_parsed", None)
            parsed = take() if take is not None else None
            if parsed is not None:
                self.seen(parsed)

    def seen(self, parsed: Any) -> None:
        """One parsed results page (`search.providers.google.ParsedPage`)."""
        health = parsed.serp.health
        # "recovered": an ok parse that needed the page's structure (its markup found too
        # few results): the brain heard the whole page, but the markup has moved on.
        kind = "recovered" if health.state == "ok" and health.reasons else health.state
        with self._lock:
            key = (parsed.engine, kind)
            self._counts[key] = self._counts.get(key, 0) + 1
            self._last[parsed.engine] = kind
        if health.state != "suspect":
            self.alerts.clear(
                parsed.engine, by=f"a later {parsed.title} parse was ok", kind="parse_suspect"
            )
        event = {"suspect": "serp.suspect", "recovered": "serp.recovered"}.get(kind)
        if event is None:
            return
        (log.warning if kind == "suspect" else log.info)(
            event,
            engine=parsed.engine,
            reasons=list(health.reasons)[:5],
            url=safe_url(parsed.url)[:300],
            results=len(parsed.serp.results),
            generic=len(parsed.serp.generic),
        )
        if kind == "suspect":
            self.alerts.parse_suspect(parsed.engine, parsed.title, health.reasons)
        if parsed.html:
            parse = parsed.serp.model_dump(mode="json")
            evidence = Evidence(
                parsed.engine, parsed.query, parsed.url, parse, parsed.html, time.time()
            )
            self.keeper.submit(evidence)

    def state(self) -> dict[str, dict[str, Any]]:
        """For `/v1/status` and the metrics: each engine's parses by health, and the last one's."""
        with self._lock:
            engines = sorted({engine for engine, _ in self._counts})
            return {
                engine: {
                    "last": self._last.get(engine),
                    "ok": self._counts.get((engine, "ok"), 0),
                    "recovered": self._counts.get((engine, "recovered"), 0),
                    "suspect": self._counts.get((engine, "suspect"), 0),
                }
                for engine in engines
            }
