"""What the console shows, held in memory only and bounded: the last calls (a ring of
`CALLS_KEPT`, each with its question, hops, passages, the envelope exactly as the brain got
it and a small screenshot on the newest `SHOTS_KEPT`), the last refusals of the queue, and the
last addresses the egress guard refused, each with the call whose turn it was.

Guards against the console costing the call path anything: recording is a few appends on the
HTTP loop, and the egress tap (a structlog processor) compares one event name and returns.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections import deque
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from browser_core import FailureKind, Hop

from .._routing import Walk

CALLS_KEPT = 200
SHOTS_KEPT = 40  # the newest calls keep their screenshot; older ones drop it
SHOT_MAX_BYTES = 200_000  # a 480-pixel JPEG is ~20-60 KB; anything bigger is not kept
REFUSALS_KEPT = 50
EGRESS_KEPT = 100
SCREEN_EVENTS_KEPT = 50
PASSAGES_KEPT = 8
PASSAGE_CHARS = 2400
QUERY_CHARS = 2000
_SOCKS_REFUSED = "ERR_SOCKS_CONNECTION_FAILED"  # Chrome's word for the egress guard's no
_AT_URL = re.compile(r" at (\S+)$")
_EGRESS_EVENTS = frozenset({"driver.fetch_blocked", "egress.refused"})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class CallRecord:
    """One call as the console shows it; `shot` is a JPEG of the screen once the stage was done."""

    id: int
    at: str
    face: str
    action: str
    query: str
    url: str | None
    started: float = field(default_factory=time.monotonic)
    elapsed_ms: int | None = None
    provider: str | None = None
    ok: bool | None = None
    success: bool | None = None
    chain: list[dict[str, Any]] = field(default_factory=list)
    envelope: str | None = None
    passages: list[str] = field(default_factory=list)
    sources: list[dict[str, str]] = field(default_factory=list)
    note: str | None = None
    shot: bytes | None = None
    shot_state: str = "pending"

    @property
    def kinds(self) -> list[str]:
        return sorted({str(h["failure_kind"]) for h in self.chain if h.get("failure_kind")})

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "face": self.face,
            "action": self.action,
            "query": self.query,
            "url": self.url,
            "elapsed_ms": self.elapsed_ms,
            "provider": self.provider,
            "ok": self.ok,
            "running": self.elapsed_ms is None,
            "route": [
                {k: h.get(k) for k in ("provider", "ok", "elapsed_ms", "failure_kind")}
                for h in self.chain
            ],
            "kinds": self.kinds,
            "shot": self.shot is not None,
        }

    def detail(self) -> dict[str, Any]:
        return {
            **self.summary(),
            "success": self.success,
            "chain": self.chain,
            "envelope": self.envelope,
            "passages": self.passages,
            "sources": self.sources,
            "note": self.note,
            "shot_state": self.shot_state,
        }


class Ring:
    """The console's memory: the calls, the queue's refusals and the egress refusals."""

    def __init__(self) -> None:
        self.calls: deque[CallRecord] = deque(maxlen=CALLS_KEPT)
        self.refusals: deque[dict[str, Any]] = deque(maxlen=REFUSALS_KEPT)
        self.egress: deque[dict[str, Any]] = deque(maxlen=EGRESS_KEPT)
        # who took the screen, gave it back, navigated, dismissed an alert (never keystrokes)
        self.screen: deque[dict[str, Any]] = deque(maxlen=SCREEN_EVENTS_KEPT)
        self.current: CallRecord | None = None  # the call whose turn it is (or was last)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # the egress tap runs on the tool's loop thread

    def started(self, face: str, action: str, query: str, url: str | None) -> CallRecord:
        record = CallRecord(
            id=next(self._ids),
            at=_now(),
            face=face,
            action=action,
            query=query[:QUERY_CHARS],
            url=url[:QUERY_CHARS] if url else None,
        )
        with self._lock:
            self.calls.appendleft(record)
            self.current = record
            self._drop_old_shots()
        return record

    def finished(self, record: CallRecord, walk: Walk) -> None:
        record.elapsed_ms = int((time.monotonic() - record.started) * 1000)
        record.chain = [_hop(hop) for hop in walk.chain]
        result = walk.result
        record.ok = result is not None
        for hop in walk.chain:
            self._egress_of(hop, record)
        if result is None:
            return
        record.provider = result.provider
        record.success = result.success
        record.envelope = result.reply_text
        record.note = result.note
        record.passages = _passages(result.data)
        record.sources = [
            {"title": s.title[:300], "url": s.url[:2000]} for s in result.sources[:12]
        ]

    def _egress_of(self, hop: Hop, record: CallRecord) -> None:
        """A hop the policy refused, or whose page the egress guard (Chrome's proxy) cut."""
        detail = hop.detail or ""
        if hop.failure_kind == FailureKind.BLOCKED_URL:
            self.egress_refused(detail, f"{hop.provider}: blocked-url (policy)", record)
        elif _SOCKS_REFUSED in detail:
            where = _AT_URL.search(detail)
            url = where.group(1) if where else detail
            self.egress_refused(url, f"{hop.provider}: the egress guard refused it", record)

    def refused(self, face: str, action: str, status: int, kind: str, reason: str) -> None:
        entry = {
            "at": _now(),
            "face": face,
            "action": action,
            "status": status,
            "kind": str(kind),
            "reason": reason[:300],
        }
        self.refusals.appendleft(entry)

    def egress_refused(self, url: str, why: str, record: CallRecord | None = None) -> None:
        record = record or self.current
        entry = {
            "at": _now(),
            "url": url[:500],
            "why": why[:120],
            "call": record.id if record else None,
            "query": record.query[:200] if record else None,
        }
        with self._lock:
            self.egress.appendleft(entry)

    def screen_event(self, what: str, who: str, url: str | None = None) -> None:
        entry = {"at": _now(), "what": what[:200], "who": who[:80], "url": (url or "")[:500]}
        with self._lock:
            self.screen.appendleft(entry)

    def find(self, call_id: int) -> CallRecord | None:
        return next((r for r in list(self.calls) if r.id == call_id), None)

    def keep_shot(self, record: CallRecord, shot: bytes | None, state: str) -> None:
        if shot is not None and len(shot) > SHOT_MAX_BYTES:
            state = f"not kept: {len(shot)} bytes is over {SHOT_MAX_BYTES}"
            shot = None
        with self._lock:
            if record in self.calls:
                record.shot, record.shot_state = shot, state
            self._drop_old_shots()

    def _drop_old_shots(self) -> None:
        for old in itertools.islice(self.calls, SHOTS_KEPT, None):
            if old.shot is not None:
                old.shot, old.shot_state = None, "dropped: only the newest calls keep one"

    def tap(
        self, _logger: Any, _method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        """A structlog processor: the egress guard's refusals, attributed to the current call."""
        if event.get("event") in _EGRESS_EVENTS:
            where = event.get("url") or f"{event.get('host', '')}:{event.get('port', '')}"
            why = event.get("resource_type") or event.get("reason") or event["event"]
            self.egress_refused(str(where), f"{event['event']} ({why})")
        return event


def _hop(hop: Hop) -> dict[str, Any]:
    data = hop.model_dump(mode="json")
    for key in ("detail", "hint"):
        if isinstance(data.get(key), str):
            data[key] = data[key][:500]
    return data


def _passages(data: dict[str, Any]) -> list[str]:
    """What each page read kept for the envelope (a read, or each read of a search): its
    kept text and, for a read focused on the question, where each passage was and its score."""
    reads = [data] if "text" in data else []
    reads += [r for r in data.get("reads") or [] if isinstance(r, dict)]
    kept: list[str] = []
    for read in reads[:PASSAGES_KEPT]:
        marks = [
            f"chars {p.get('start')}-{p.get('end')} score {p.get('score')}"
            + (" (best)" if p.get("best") else "")
            for p in read.get("passages") or []
            if isinstance(p, dict)
        ]
        where = str(read.get("final_url") or read.get("url") or "")
        head = f"{where} [{'; '.join(marks)}]" if marks else where
        kept.append(f"{head}\n{str(read.get('text') or '')[:PASSAGE_CHARS]}".strip())
    return kept
