"""The Gemini CLI's session record of one run: finding it, reading its sources, removing it.

`-o json` gives the answer with `[n]` markers but no URLs; the URLs exist only in the
`google_web_search` outputs the CLI records (0.61) in
`$GEMINI_CLI_HOME|$HOME/.gemini/tmp/<project>/chats/session-<date>-<first 8 of id>.jsonl`,
where `<project>` is the slug `projects.json` gives the working directory. Guards against a
record that is missing or changed shape (`RecordError`: the caller falls back) and against
leaving a copy of every question behind (`remove_run`).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from browser_core import Source

from ._models import urls_in_text

SEARCH_TOOL = "google_web_search"
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{7,127}$")
# The tool's output ends with "\n\nSources:\n[1] title (url)\n[2] ..." (web-search.js).
_SOURCES_BLOCK = "\n\nSources:\n"
_SOURCE_LINE = re.compile(r"^\[(\d{1,4})\] (.*) \((\S+)\)$")
# An answer's markers: "[1]", "[1][2]", "[1, 2]", with the blank before them.
_MARKER_RUN = re.compile(r"[ \t]*(?:\[\d{1,4}(?:\s*,\s*\d{1,4})*\])+")
_NUMBER = re.compile(r"\d+")
_MAX_RECORD_BYTES = 32 * 1024 * 1024
# A record in our own project folder this old has no live run (GEMINI_TIMEOUT_S <= 600).
STALE_AFTER_S = 660.0


class RecordError(Exception):
    """The run's record is missing, or not in the shape this code knows."""


@dataclass(frozen=True)
class RunRecord:
    """What one run's record says: each search's numbered sources and query, the model of
    the last main turn."""

    path: Path
    searches: tuple[tuple[Source | None, ...], ...]
    queries: tuple[str, ...]
    model: str | None


def gemini_dir(env: dict[str, str]) -> Path:
    """The `.gemini` folder a CLI started with `env` uses (its own `homedir()` rule)."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())
    return Path(home).expanduser() / ".gemini"


def valid_session_id(value: Any) -> str | None:
    """The session id if it is safe to put in a file name (the CLI's are UUIDs)."""
    return value if isinstance(value, str) and _SESSION_ID.match(value) else None


# --- finding it -------------------------------------------------------------------------


def _registered_slug(home: Path, workdir: Path) -> str | None:
    try:
        projects = json.loads((home / "projects.json").read_text(encoding="utf-8"))["projects"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    for key in (str(workdir), str(workdir.resolve())):
        slug = projects.get(key) if isinstance(projects, dict) else None
        if isinstance(slug, str) and slug and "/" not in slug and slug not in (".", ".."):
            return slug
    return None


def registered_project(home: Path, workdir: Path) -> Path | None:
    """The project folder `projects.json` gives our working directory, if any."""
    slug = _registered_slug(home, workdir)
    return home / "tmp" / slug if slug is not None else None


def project_dirs(home: Path, workdir: Path) -> Iterator[Path]:
    """The registered project folder of `workdir` first, then every other one."""
    tmp = home / "tmp"
    slug = _registered_slug(home, workdir)
    if slug is not None:
        yield tmp / slug
    with contextlib.suppress(OSError):
        for folder in sorted(tmp.iterdir()):
            if folder.name != slug and (folder / "chats").is_dir():
                yield folder


def _first_record(path: Path) -> Any:
    with path.open("rb") as fh:
        first = fh.readline(1024 * 1024) if path.suffix == ".jsonl" else fh.read()
    try:
        return json.loads(first)
    except ValueError:
        return None


def _is_ours(path: Path, session_id: str) -> bool:
    try:
        head = _first_record(path)
    except OSError:
        return False
    return isinstance(head, dict) and head.get("sessionId") == session_id


def find_record(home: Path, workdir: Path, session_id: str) -> tuple[Path, Path] | None:
    """(project folder, record file) of the run `session_id`, if the CLI wrote one."""
    short = session_id[:8]
    for project in project_dirs(home, workdir):
        for pattern in (f"session-*-{short}.jsonl", f"session-*-{short}.json"):
            for path in sorted((project / "chats").glob(pattern)):
                if _is_ours(path, session_id):
                    return project, path
    return None


# --- reading it -------------------------------------------------------------------------


def _records(path: Path) -> list[dict[str, Any]]:
    if path.stat().st_size > _MAX_RECORD_BYTES:
        raise RecordError(f"{path.name} is larger than {_MAX_RECORD_BYTES} bytes")
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":  # the format before JSON lines: one object with `messages`
        whole = json.loads(text)
        return [whole, {"$set": {"messages": whole.get("messages")}}]
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not all(isinstance(record, dict) for record in records):
        raise RecordError("a line of the record is not a JSON object")
    return records


def messages_of(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the CLI rebuilds it: a message per id (the last write wins);
    `{"$set": {"messages": [...]}}` replaces them all."""
    messages: dict[str, dict[str, Any]] = {}
    for record in records:
        update = record.get("$set")
        if isinstance(update, dict) and isinstance(update.get("messages"), list):
            messages.clear()
            for message in update["messages"]:
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    messages[message["id"]] = message
        elif isinstance(record.get("id"), str) and isinstance(record.get("type"), str):
            messages[record["id"]] = record
    return list(messages.values())


def _search_calls(messages: list[dict[str, Any]]) -> Iterator[tuple[str, str]]:
    """Each `google_web_search` call's (query, output), once per call id, in order."""
    seen: set[str] = set()
    for message in messages:
        calls = message.get("toolCalls") if message.get("type") == "gemini" else None
        for call in calls if isinstance(calls, list) else ():
            if not isinstance(call, dict) or call.get("name") != SEARCH_TOOL:
                continue
            for part in call.get("result") or ():
                response = (part.get("functionResponse") or {}) if isinstance(part, dict) else {}
                output = (response.get("response") or {}).get("output")
                key = str(response.get("id") or call.get("id") or len(seen))
                if isinstance(output, str) and key not in seen:
                    seen.add(key)
                    query = (call.get("args") or {}).get("query")
                    yield (query if isinstance(query, str) else ""), output


def _source(title: str, url: str) -> Source | None:
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        return None
    return Source(title="" if title == "Untitled" else title.strip(), url=url)


def parse_sources(output: str) -> tuple[Source | None, ...]:
    """`[n] title (url)` lines after the output's last "Sources:" heading, by number
    (None where a number has no usable URL, e.g. the CLI's "No URI")."""
    _, found, block = output.rpartition(_SOURCES_BLOCK)
    numbered: dict[int, Source | None] = {}
    for line in block.splitlines() if found else ():
        match = _SOURCE_LINE.match(line.strip())
        if match is not None:
            numbered[int(match.group(1))] = _source(match.group(2), match.group(3))
    return tuple(numbered.get(n) for n in range(1, max(numbered, default=0) + 1))


def _last_model(messages: list[dict[str, Any]]) -> str | None:
    for message in reversed(messages):
        model = message.get("model")
        if message.get("type") == "gemini" and isinstance(model, str) and model:
            return model
    return None


def read_record(path: Path, session_id: str) -> RunRecord:
    """Parse the run's record; RecordError when it is not the shape 0.61 writes."""
    try:
        records = _records(path)
    except (OSError, ValueError, AttributeError) as exc:
        raise RecordError(f"{path.name} is not readable JSON: {type(exc).__name__}") from exc
    if not records or records[0].get("sessionId") != session_id:
        raise RecordError(f"{path.name} does not start with the session's metadata")
    messages = messages_of(records)
    if not any(message.get("type") == "gemini" for message in messages):
        raise RecordError(f"{path.name} holds no model turn")
    calls = list(_search_calls(messages))
    return RunRecord(
        path=path,
        searches=tuple(parse_sources(output) for _, output in calls),
        queries=tuple(dict.fromkeys(query for query, _ in calls if query)),
        model=_last_model(messages),
    )


# --- the answer's markers ---------------------------------------------------------------


def _resolve(number: int, searches: tuple[tuple[Source | None, ...], ...]) -> Source | None:
    """Each search numbers its own list from 1: [n] is the latest search's n-th source."""
    for found in reversed(searches):
        if 0 < number <= len(found) and found[number - 1] is not None:
            return found[number - 1]
    return None


def cite(text: str, searches: tuple[tuple[Source | None, ...], ...]) -> tuple[str, list[Source]]:
    """The text with its markers renumbered into the returned sources (every search's,
    deduplicated by URL, then URLs written in the text); markers that map to nothing go."""
    sources: dict[str, Source] = {}
    for found in searches:
        for source in found:
            if source is not None:
                sources.setdefault(source.url, source)
    order = {url: index for index, url in enumerate(sources, start=1)}

    def renumber(match: re.Match[str]) -> str:
        numbers: list[int] = []
        for digits in _NUMBER.findall(match.group(0)):
            source = _resolve(int(digits), searches)
            if source is not None and order[source.url] not in numbers:
                numbers.append(order[source.url])
        blank = match.group(0)[: len(match.group(0)) - len(match.group(0).lstrip(" \t"))]
        return blank + "".join(f"[{n}]" for n in numbers) if numbers else ""

    cited = _MARKER_RUN.sub(renumber, text).strip()
    for source in urls_in_text(cited):
        sources.setdefault(source.url, source)
    return cited, list(sources.values())


# --- removing it ------------------------------------------------------------------------


def run_files(project: Path, record: Path | None, session_id: str) -> list[Path]:
    """What the CLI keeps of one run: the record, its log, its tool outputs, its folders
    (the same list the CLI's own `deleteSessionArtifactsAsync` removes)."""
    paths = [
        project / "logs" / f"session-{session_id}.jsonl",
        project / "tool-outputs" / f"session-{session_id}",
        project / session_id,
        project / "chats" / session_id,
    ]
    return [record, *paths] if record is not None else paths


def stale_runs(home: Path, workdir: Path, now: float) -> list[Path]:
    """The files of runs that ended without an answer to read (killed at the timeout), in
    the project folder registered for our private working directory alone."""
    project, paths = registered_project(home, workdir), []
    if project is None:
        return []
    for record in (project / "chats").glob("session-*.json*"):
        with contextlib.suppress(OSError):
            head = _first_record(record) if record.stat().st_mtime < now - STALE_AFTER_S else None
            session_id = valid_session_id(head.get("sessionId") if isinstance(head, dict) else None)
            if session_id is not None:
                paths += run_files(project, record, session_id)
    return paths


def remove_paths(paths: list[Path]) -> list[Path]:
    """Delete files and folders (never following a link out); the ones that went."""
    removed = []
    for path in paths:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:  # gone already, or not ours to remove
            continue
        removed.append(path)
    return removed
