"""Alerts for the person running the stream: a search engine that refused us (its captcha,
its consent wall, any `blocked` kind) raises one that stays until it is dealt with.

Guards against a refusal nobody hears of: every later search goes to Gemini, off screen,
until a person solves the challenge in the broadcast Chrome. The alert is read from any
thread (the service's `/v1/status`, `/metrics`, the console); it clears when a later hop of
the same provider succeeds (the challenge was solved) or when a person dismisses it.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import structlog

from browser_core import FailureKind, Hop

log = structlog.get_logger("search.alerts")

# The failure kinds that mean "the site refused us" (any engine's walls, not only Google's).
BLOCKED_KINDS = frozenset({FailureKind.BLOCKED, FailureKind.CAPTCHA, FailureKind.CONSENT})
_DETAIL_CHARS = 300


@dataclass
class Alert:
    """One provider's refusal: what it was, when it began and was last seen, how often."""

    provider: str
    kind: str
    detail: str
    since: str
    last: str
    count: int = 1


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Alerts:
    """The open alerts, one per provider; thread-safe (the tool's loop raises them, the
    service's loop reads them)."""

    def __init__(self) -> None:
        self._open: dict[str, Alert] = {}
        self._lock = threading.Lock()

    def observe(self, chain: list[Hop]) -> None:
        """Raise an alert for every hop refused with a blocked kind; clear a provider's alert
        when one of its hops succeeded."""
        for hop in chain:
            if hop.failure_kind in BLOCKED_KINDS:
                self._raise(hop)
            elif hop.ok:
                self.clear(hop.provider, by="a later call on screen succeeded")

    def _raise(self, hop: Hop) -> None:
        detail = (hop.detail or "")[:_DETAIL_CHARS]
        with self._lock:
            alert = self._open.get(hop.provider)
            if alert is not None:
                alert.kind, alert.detail, alert.last = str(hop.failure_kind), detail, _now()
                alert.count += 1
                return
            now = _now()
            self._open[hop.provider] = Alert(hop.provider, str(hop.failure_kind), detail, now, now)
        log.warning(
            "alert.raised",
            provider=hop.provider,
            failure_kind=hop.failure_kind,
            detail=detail,
            hint="solve it in the broadcast Chrome: take the screen in the console",
        )

    def clear(self, provider: str, *, by: str) -> bool:
        """Close `provider`'s alert; whether there was one."""
        with self._lock:
            alert = self._open.pop(provider, None)
        if alert is not None:
            log.info("alert.cleared", provider=provider, failure_kind=alert.kind, by=by)
        return alert is not None

    def active(self) -> list[dict[str, object]]:
        """The open alerts, oldest first, as JSON-ready dicts."""
        with self._lock:
            return [asdict(alert) for alert in self._open.values()]
