"""Cases: results pages whose parse was suspect, kept in the state folder for the fix and its test.

Guards against the page nobody can get back: Google changes its markup, a parse misses the
results, and by the time someone looks the page is gone. Each case is a folder
`SB_STATE_DIR/cases/<time>-<engine>-<slug>/` holding the page (gzipped), its parse and
health, the query and the address. Kept bounded (`SB_CASES_MAX` newest, `SB_CASES_MAX_MB` in
all), written off the call's path (one low-priority worker thread, a short queue), and
scrubbed: the address keeps only the search's own parameters, no header or cookie is ever
stored, and whatever looks like a key, a token or an e-mail address in the page (or is one of
this process's own secrets) is replaced. `export_case` turns a case into a recording
(docs/google.md).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import queue
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import structlog

from browser_core import Settings, StreamBrowserError
from browser_core.recording import document_entry

log = structlog.get_logger("search.cases")

CASES_FOLDER = "cases"
PAGE_FILE = "page.html.gz"
PARSE_FILE = "parse.json"
CASE_FILE = "case.json"
# The parameters of a results page's address that say what was searched, and how; every
# other one (a session's `sei`, `ved`, a token) is dropped before it is logged or kept.
SEARCH_PARAMS = frozenset({"q", "hl", "gl", "udm", "tbm", "start", "num", "setlang", "cc"})
SCRUBBED = "[scrubbed]"
# What looks like a key or a token, in any page text: Google API keys and OAuth tokens,
# JSON web tokens, bearer credentials, common vendors' keys, and the value of a parameter
# named like a secret.
# Each pattern begins with literal text, so the regular expression engine skips to it
# (measured on a 3 MB results page: 2-30 ms a pattern, against 2 s for one alternation that
# looked for them all at every position). A word boundary, where one is needed, is looked
# behind the literal.
_SECRETS = tuple(
    re.compile(pattern)
    for pattern in (
        r"AIza[0-9A-Za-z_\-]{35}",  # Google API keys
        r"ya29\.[0-9A-Za-z_\-]{20,}",  # Google OAuth access tokens
        r"1//0[0-9A-Za-z_\-]{20,}",  # Google OAuth refresh tokens
        r"eyJ[0-9A-Za-z_\-]{10,}\.[0-9A-Za-z_\-]{10,}\.[0-9A-Za-z_\-]{10,}",  # JSON web tokens
        r"earer(?<=[Bb]earer)\s+[0-9A-Za-z._~+/\-]{16,}=*",  # bearer credentials
        r"sk-(?<![A-Za-z0-9]sk-)[A-Za-z0-9_\-]{20,}",
        r"gh[pousr]_(?<![A-Za-z0-9]gh[pousr]_)[A-Za-z0-9]{30,}",
        r"xox[abprs]-(?<![A-Za-z0-9]xox[abprs]-)[A-Za-z0-9\-]{10,}",
        r"AKIA(?<![A-Za-z0-9]AKIA)[0-9A-Z]{16}\b",
    )
)
# The value of a parameter named like a secret (`?key=...`, `&amp;token=...`).
_VALUE = re.compile(r"=[^&\"'\s<>#]{6,}")
_SECRET_NAME = re.compile(
    r"[?&;](?:api_key|apikey|key|token|access_token|auth|password|session|sig)\Z", re.I
)
# An e-mail address (a broadcast Chrome signed in to Google shows its account's): found by
# its domain part, then its local part is walked back over.
_MAIL_DOMAIN = re.compile(r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_MAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
# What a results page of a browser signed in to Google carries (the recorder looks for the same).
_SIGNED_IN = ("SignOutOptions", "accounts.google.com/Logout")
_SLUG = re.compile(r"[^a-z0-9]+")
_NAME = re.compile(r"[0-9]{8}T[0-9]{6}Z-[a-z]+-[a-z0-9-]{1,60}")
_PIECE = 64 << 10  # characters scrubbed at a time
# A case waits this long before it is written: the call it came from hands its answer back
# first (the scrub and the compression would hold the interpreter beside it otherwise).
AFTER_ANSWER_S = 0.5
_QUEUED = 2  # cases waiting for the worker at most; more are dropped (and logged)


def safe_url(url: str) -> str:
    """`url` with only the search's own parameters (no session, tracking or token ones)."""
    parts = urlsplit(url)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k in SEARCH_PARAMS]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(kept), ""))


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with this process's `secrets` and whatever looks like a key, a token or an
    e-mail address replaced. A long page is scrubbed in pieces cut after a `>` (no pattern
    spans one), so the thread doing it lets the others run between pieces."""
    for secret in secrets:
        if len(secret) >= 6:
            text = text.replace(secret, SCRUBBED)
    pieces, start = [], 0
    while start < len(text):
        end = text.find(">", start + _PIECE)
        end = len(text) if end < 0 else end + 1
        pieces.append(_scrub_piece(text[start:end]))
        start = end
    return "".join(pieces)


def _scrub_piece(text: str) -> str:
    for pattern in _SECRETS:
        text = pattern.sub(SCRUBBED, text)
    text = _VALUE.sub(lambda m: _value(text, m), text)
    return _mails(text) if "@" in text else text


def _mails(text: str) -> str:
    """`text` with each e-mail address replaced (its local part walked back from the `@`)."""
    out, last = [], 0
    for match in _MAIL_DOMAIN.finditer(text):
        start = match.start()
        while start > last and text[start - 1] in _MAIL_LOCAL:
            start -= 1
        if start < match.start():  # a local part: an address, not a CSS at-rule
            out += [text[last:start], SCRUBBED]
            last = match.end()
    out.append(text[last:])
    return "".join(out)


def _value(text: str, match: re.Match[str]) -> str:
    named = _SECRET_NAME.search(text, max(0, match.start() - 14), match.start())
    return "=" + SCRUBBED if named else match.group()


@dataclass(frozen=True)
class Evidence:
    """A suspect results page to keep: who parsed it, for what, the parse and the page."""

    engine: str
    query: str
    url: str
    parse: dict[str, Any]
    html: str
    at: float


def _slug(query: str) -> str:
    slug = _SLUG.sub("-", query.lower()).strip("-")[:40].strip("-")
    return slug or "query"


class CaseStore:
    """The cases folder: save (bounded), list, show, read back the page. Thread-safe."""

    def __init__(
        self,
        root: Path,
        *,
        max_count: int = 20,
        max_bytes: int = 50 << 20,
        secrets: Iterable[str] = (),
    ) -> None:
        self.root = root
        self.max_count = max_count
        self.max_bytes = max_bytes
        self._secrets = tuple(secrets)
        self._lock = threading.Lock()
        self._index: list[dict[str, Any]] | None = None

    @classmethod
    def for_settings(cls, settings: Settings) -> CaseStore:
        root = Path(settings.state_dir).expanduser() / CASES_FOLDER
        return cls(
            root,
            max_count=settings.cases_max,
            max_bytes=int(settings.cases_max_mb * (1 << 20)),
            secrets=settings.secret_values(),
        )

    def save(self, evidence: Evidence) -> str | None:
        """Write one case (whole, or not at all) and prune to the bounds; its name, or None
        when cases are not kept (`SB_CASES_MAX=0`) or it alone is over the size bound."""
        if self.max_count <= 0:
            return None
        stamp = datetime.fromtimestamp(evidence.at, UTC).strftime("%Y%m%dT%H%M%SZ")
        base = f"{stamp}-{_slug(evidence.engine)}-{_slug(evidence.query)}"
        page = gzip.compress(scrub(evidence.html, self._secrets).encode("utf-8"), 6)
        parse = scrub(json.dumps(evidence.parse, ensure_ascii=False, indent=1), self._secrets)
        health = evidence.parse.get("health") or {}
        meta: dict[str, Any] = {
            "engine": evidence.engine,
            "query": evidence.query,
            "url": safe_url(evidence.url),
            "at": datetime.fromtimestamp(evidence.at, UTC)
            .isoformat(timespec="seconds")
            .replace("+00:00", "Z"),
            "health": health,
            "results": len(evidence.parse.get("results") or []),
            "generic": len(evidence.parse.get("generic") or []),
            "page_bytes": len(evidence.html.encode("utf-8")),
        }
        with self._lock:
            self.root.mkdir(parents=True, exist_ok=True)
            name = self._free_name(base)
            meta["name"] = name
            meta["bytes"] = size = len(page) + len(parse)
            if size > self.max_bytes:
                log.warning("serp.case_too_big", case=name, bytes=size)
                return None
            scratch = self.root / f".tmp-{name}"
            scratch.mkdir()
            (scratch / PAGE_FILE).write_bytes(page)
            (scratch / PARSE_FILE).write_text(parse, encoding="utf-8")
            text = scrub(json.dumps(meta, ensure_ascii=False, indent=1), self._secrets)
            (scratch / CASE_FILE).write_text(text + "\n", encoding="utf-8")
            scratch.rename(self.root / name)
            self._index = None
            self._prune()
        return name

    def _free_name(self, base: str) -> str:
        name, n = base, 1
        while (self.root / name).exists():
            n += 1
            name = f"{base}-{n}"
        return name

    def _folders(self) -> list[Path]:
        """The cases, newest first (names begin with their time)."""
        if not self.root.is_dir():
            return []
        found = [p for p in self.root.iterdir() if p.is_dir() and _NAME.fullmatch(p.name)]
        return sorted(found, key=lambda p: p.name, reverse=True)

    def _prune(self) -> None:
        kept_bytes = 0
        for index, folder in enumerate(self._folders()):
            size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
            if index < self.max_count and kept_bytes + size <= self.max_bytes:
                kept_bytes += size
                continue
            shutil.rmtree(folder, ignore_errors=True)
            log.info("serp.case_pruned", case=folder.name, bytes=size)
        for stale in self.root.glob(".tmp-*"):  # a save cut short by a crash
            shutil.rmtree(stale, ignore_errors=True)

    def list(self) -> list[dict[str, Any]]:
        """Every case, newest first: name, engine, query, at, health's reasons, sizes."""
        with self._lock:
            if self._index is None:
                self._index = [m for f in self._folders() if (m := _read_meta(f)) is not None]
            return [dict(m) for m in self._index]

    def folder(self, name: str) -> Path:
        """A case's folder; `StreamBrowserError` (saying how to list them) when none is."""
        folder = self.root / name
        if not _NAME.fullmatch(name) or not (folder / CASE_FILE).is_file():
            raise StreamBrowserError(
                f"no case named {name!r} in {self.root}",
                hint="list them with `stream-browser cases list`",
            )
        return folder

    def show(self, name: str) -> dict[str, Any]:
        """A case's record and its parse."""
        folder = self.folder(name)
        meta = _read_meta(folder) or {}
        parse = json.loads((folder / PARSE_FILE).read_text(encoding="utf-8"))
        return {**meta, "parse": parse}

    def page(self, name: str) -> str:
        return gzip.decompress((self.folder(name) / PAGE_FILE).read_bytes()).decode("utf-8")


def _read_meta(folder: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads((folder / CASE_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


class CaseKeeper:
    """Saves cases on one worker thread of low priority, after the call has its answer
    (`AFTER_ANSWER_S`): a short queue, and a case that finds it full is dropped (logged),
    never waited for."""

    def __init__(
        self, store: CaseStore, on_saved: Callable[[str, str], None] | None = None
    ) -> None:
        self.store = store
        self.on_saved = on_saved  # (engine, case name)
        self._queue: queue.Queue[Evidence] = queue.Queue(maxsize=_QUEUED)
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def submit(self, evidence: Evidence) -> bool:
        """Queue `evidence` for saving; False (and a log line) when the queue is full."""
        if self.store.max_count <= 0:
            return False
        self._ensure_worker()
        try:
            self._queue.put_nowait(evidence)
        except queue.Full:
            log.warning("serp.case_dropped", engine=evidence.engine, why="cases queue full")
            return False
        return True

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued case is written (tests, shutdown); whether it was."""
        end = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < end:
            time.sleep(0.01)
        return not self._queue.unfinished_tasks

    def _ensure_worker(self) -> None:
        with self._start:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="cases", daemon=True)
                self._thread.start()

    def _work(self) -> None:
        if not os.environ.get("NONICE"):
            with contextlib.suppress(OSError, AttributeError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        while True:
            evidence = self._queue.get()
            try:
                time.sleep(max(0.0, evidence.at + AFTER_ANSWER_S - time.time()))
                self._save(evidence)
            finally:
                self._queue.task_done()

    def _save(self, evidence: Evidence) -> None:
        started = time.monotonic()
        try:
            name = self.store.save(evidence)
        except OSError as exc:
            log.warning(
                "serp.case_failed",
                engine=evidence.engine,
                error=f"{type(exc).__name__}: {exc.strerror or exc}"[:200],
                hint="check that SB_STATE_DIR is writable and has room",
            )
            return
        if name is None:
            return
        if any(marker in evidence.html for marker in _SIGNED_IN):
            log.warning(
                "serp.case_signed_in",
                case=name,
                hint="the broadcast Chrome is signed in to Google: its account's address was "
                "scrubbed from the case; sign the broadcast profile out",
            )
        log.info(
            "serp.case_saved",
            engine=evidence.engine,
            case=name,
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )
        if self.on_saved is not None:
            self.on_saved(evidence.engine, name)


# -- a case as a recording ---------------------------------------------------------------------


def case_options(meta: dict[str, Any]) -> dict[str, Any]:
    """The settings a recording of the case pins, so its replay asks for the kept address:
    the engine alone, and its language and region."""
    params = dict(parse_qsl(urlsplit(str(meta.get("url", ""))).query))
    engine = str(meta.get("engine", "google"))
    hl = params.get("hl") or params.get("setlang") or "en"
    gl = params.get("gl") or params.get("cc") or "us"
    return {
        "search_engines": [engine],
        "google_hl": hl,
        "google_gl": gl,
        "google_udm14": params.get("udm") == "14",
    }


def page_har(url: str, html: str) -> dict[str, Any]:
    """A HAR of one document (the kept results page at its address), as a recording's
    `session.har` holds it: its replay aborts every other request."""
    body = html.encode("utf-8")
    kind = "text/html; charset=utf-8"
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "stream-browser cases export", "version": "1"},
            "pages": [],
            "entries": [document_entry(url, 200, kind, body, "OK")],
        }
    }


def export_case(store: CaseStore, name: str, folder: Path) -> Path:
    """Write the case `name` as a recording in `folder` (session.har, action.json,
    README.md); its expected.json is written by replaying it (`make case`, or
    `scripts/update_recordings.py NAME`). Refuses to overwrite a recording."""
    from search.recordings import write_case

    meta = store.show(name)
    if (folder / "action.json").exists():
        raise StreamBrowserError(
            f"{folder} already holds a recording",
            hint="choose another NAME, or delete the folder first",
        )
    provenance = (
        f"kept by stream-browser as case {name} ({meta.get('engine')}, "
        f"{meta.get('at')}): its parse was suspect "
        f"({'; '.join(meta.get('health', {}).get('reasons', [])) or 'no reason given'}). "
        "Made with `stream-browser cases export`."
    )
    write_case(folder, "search", str(meta["query"]), case_options(meta), provenance)
    har = page_har(str(meta["url"]), store.page(name))
    (folder / "session.har").write_text(
        json.dumps(har, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return folder
