"""Alerts for the person running the stream: a search engine that refused us (its captcha,
its consent wall, any `blocked` kind), or whose results page no longer parses as it should,
raises one that stays until it is dealt with.

Guards against a refusal nobody hears of (every later search goes to Gemini, off screen,
until a person solves the challenge in the broadcast Chrome) and against a changed results
page nobody hears of (the brain gets a generic reading, and the parser needs a fix). The
alerts are read from any thread (the service's `/v1/status`, `/metrics`, the console). A
refusal clears when a later hop of the same provider succeeds (the challenge was solved); a
suspect parse, when a later parse of the same engine is ok; either, when a person dismisses it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import structlog

from browser_core import FailureKind, Hop

log = structlog.get_logger("search.alerts")

# The failure kinds that mean "the site refused us" (any engine's walls, not only Google's).
BLOCKED_KINDS = frozenset({FailureKind.BLOCKED, FailureKind.CAPTCHA, FailureKind.CONSENT})
# The kind of the alert a suspect parse raises (not a failure kind: the search answered).
PARSE_SUSPECT = "parse_suspect"
_DETAIL_CHARS = 300


@dataclass
class Alert:
    """One provider's refusal, or one engine's suspect parse: what it was, when it began and
    was last seen, how often; `message` says it in words, `case` names the page kept."""

    provider: str
    kind: str
    detail: str
    since: str
    last: str
    count: int = 1
    message: str = ""
    case: str | None = None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _family(kind: str) -> str:
    return "parse" if kind == PARSE_SUSPECT else "refused"


class Alerts:
    """The open alerts, one per provider and family (a refusal, a suspect parse); thread-safe
    (the tool's loop raises them, the service's loop reads them)."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, str], Alert] = {}
        self._lock = threading.Lock()

    def observe(self, chain: list[Hop]) -> None:
        """Raise an alert for every hop refused with a blocked kind; clear a provider's
        refusal when one of its hops succeeded."""
        for hop in chain:
            if hop.failure_kind in BLOCKED_KINDS:
                self._raise(hop)
            elif hop.ok:
                self.clear(hop.provider, by="a later call on screen succeeded", kind="refused")

    def _raise(self, hop: Hop) -> None:
        detail = (hop.detail or "")[:_DETAIL_CHARS]
        if self._open_or_count(hop.provider, str(hop.failure_kind), detail, ""):
            log.warning(
                "alert.raised",
                provider=hop.provider,
                failure_kind=hop.failure_kind,
                detail=detail,
                hint="solve it in the broadcast Chrome: take the screen in the console",
            )

    def parse_suspect(self, engine: str, title: str, reasons: Sequence[str]) -> None:
        """`engine`'s results page parsed as suspect: raise its alert (or count it again)."""
        detail = "; ".join(reasons)[:_DETAIL_CHARS]
        message = f"{title}'s results page may have changed"
        if self._open_or_count(engine, PARSE_SUSPECT, detail, message):
            log.warning(
                "alert.raised",
                provider=engine,
                failure_kind=PARSE_SUSPECT,
                detail=detail,
                hint="the brain gets a generic reading meanwhile; the page is kept as a case: "
                "see `stream-browser cases list` and docs/google.md",
            )

    def note_case(self, engine: str, case: str) -> None:
        """The case kept for `engine`'s open suspect-parse alert."""
        with self._lock:
            alert = self._open.get((engine, "parse"))
            if alert is not None:
                alert.case = case

    def _open_or_count(self, provider: str, kind: str, detail: str, message: str) -> bool:
        """Open an alert, or count the open one again; whether it is new."""
        with self._lock:
            alert = self._open.get((provider, _family(kind)))
            if alert is not None:
                alert.kind, alert.detail, alert.last = kind, detail, _now()
                alert.count += 1
                return False
            now = _now()
            self._open[(provider, _family(kind))] = Alert(
                provider, kind, detail, now, now, message=message
            )
            return True

    def clear(self, provider: str, *, by: str, kind: str | None = None) -> bool:
        """Close `provider`'s alerts (only the family of `kind`, when given); whether there
        was one."""
        families = ("refused", "parse") if kind is None else (_family(kind),)
        with self._lock:
            gone = [self._open.pop((provider, f), None) for f in families]
        closed = [alert for alert in gone if alert is not None]
        for alert in closed:
            log.info("alert.cleared", provider=provider, failure_kind=alert.kind, by=by)
        return bool(closed)

    def active(self) -> list[dict[str, object]]:
        """The open alerts, oldest first, as JSON-ready dicts."""
        with self._lock:
            return [asdict(alert) for alert in self._open.values()]
