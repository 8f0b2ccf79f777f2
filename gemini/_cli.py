"""Subprocess client for the Gemini CLI (Google-account login, `GEMINI_AUTH=oauth`).

Guards against the CLI failure modes measured in ENVIRONMENT.md: a `[Y/n]` login prompt
that hangs forever (NO_BROWSER=true, no DISPLAY, stdin closed), an API key picked up from a
`.env` above its working directory (keys stripped, private empty cwd, checked), a relaunched
child that SIGTERM misses (own session, the whole group is killed), and exit 0 with empty
stdout after a kill (empty output is a failure). The answer's sources come from the run's own
session record, which is then deleted (gemini/_session.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from browser_core import Settings, is_credential_name

from ._errors import (
    GeminiAuthError,
    GeminiBadResponse,
    GeminiCliError,
    GeminiCliMissing,
    GeminiError,
    GeminiModelError,
    GeminiQuotaError,
    GeminiTimeout,
    GeminiUnavailable,
    GeminiUntrusted,
)
from ._models import GeminiAnswer, urls_in_text
from ._session import (
    RecordError,
    RunRecord,
    cite,
    find_record,
    gemini_dir,
    read_record,
    registered_project,
    remove_paths,
    run_files,
    stale_runs,
    valid_session_id,
)

log = structlog.get_logger("gemini.cli")

KILL_GRACE_S = 0.5
DRAIN_S = 1.0
PROJECT_ROOT = Path(__file__).resolve().parents[1]  # never a working directory for the CLI
CREDS_FILE = "oauth_creds.json"

INSTALL_HINT = (
    "install it with `npm i -g @google/gemini-cli` (or set GEMINI_CLI to its path), "
    "then sign in once with an interactive `gemini`"
)
AUTH_HINT = (
    "seed a login: run `gemini` interactively once and sign in, then point GEMINI_OAUTH_DIR "
    "at the resulting .gemini folder (or its parent); or switch to GEMINI_AUTH=apikey "
    "with GEMINI_API_KEY"
)
QUOTA_HINT = "wait and retry later, or switch to GEMINI_AUTH=apikey with GEMINI_API_KEY"
TIMEOUT_HINT = (
    "raise GEMINI_TIMEOUT_S, or check the network: without it the CLI retries for minutes"
)
UNTRUSTED_HINT = "the CLI ignored --skip-trust: check its version (tested with 0.61)"
MODEL_HINT = "set GEMINI_MODEL to a model your account can use, or unset it"
UNAVAILABLE_HINT = "check the network and https://status.cloud.google.com, then retry"
CLI_ERROR_HINT = "run the same `gemini -p ... -o json --skip-trust` by hand to see the full error"
BAD_RESPONSE_HINT = (
    "the Gemini API sent an answer the CLI could not read (a broken stream): retry; if it "
    "persists, check the CLI version (tested with 0.61)"
)
RECORD_HINT = (
    "the answer's sources come from the CLI's session record (tested with 0.61): check the "
    "CLI version; meanwhile only URLs written in the answer are returned"
)
VERSION_TIMEOUT_S = 5.0

# Child environment: variables removed (besides every *_API_KEY) and forced.
_DROPPED_VARS = (  # besides every credential (`is_credential_name`)
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GEMINI_CLI_HOME",
)
_FORCED_VARS = {
    "GOOGLE_GENAI_USE_GCA": "true",
    "NO_BROWSER": "true",
    "GEMINI_CLI_NO_RELAUNCH": "true",
}

# The CLI reports most failures only as text. Ordered: the first matching row wins.
# Each row: (name, pattern, error class). tests/test_gemini_cli.py has one test per row.
CLI_ERROR_PATTERNS: tuple[tuple[str, re.Pattern[str], type[GeminiError]], ...] = (
    (
        "manual-authorization",
        re.compile(r"Manual authorization is required", re.I),
        GeminiAuthError,
    ),
    (
        "authentication-error",
        re.compile(r"FatalAuthenticationError|Error authenticating", re.I),
        GeminiAuthError,
    ),
    ("client-no-longer-supported", re.compile(r"no longer supported", re.I), GeminiAuthError),
    (
        "login-expired",
        re.compile(
            r"invalid_grant|(token|credentials?|login|session)\s+(has\s+|have\s+)?"
            r"(been\s+)?(expired|revoked)",
            re.I,
        ),
        GeminiAuthError,
    ),
    (
        "login-required",
        re.compile(
            r"please\s+(log\s?in|sign\s?in|re-?authenticate)|set an Auth method|UNAUTHENTICATED",
            re.I,
        ),
        GeminiAuthError,
    ),
    (
        "login-prompt",
        re.compile(r"Opening authentication page|Do you want to continue\? \[Y/n\]", re.I),
        GeminiAuthError,
    ),
    (
        "quota",
        re.compile(r"RESOURCE_EXHAUSTED|\b429\b|quota|rate.?limit|too many requests", re.I),
        GeminiQuotaError,
    ),
    (
        "untrusted-folder",
        re.compile(r"untrusted (folder|workspace|directory)", re.I),
        GeminiUntrusted,
    ),
    (
        "model-not-found",
        re.compile(r"model\b.{0,80}\bnot (found|supported)|ModelNotFound|\bNOT_FOUND\b", re.I),
        GeminiModelError,
    ),
    (
        "broken-stream",
        re.compile(
            r"Unterminated string in JSON|Unexpected (token|end of JSON|non-whitespace)|"
            r"in JSON at position|incomplete json segment|Bad control character",
            re.I,
        ),
        GeminiBadResponse,
    ),
    (
        "unavailable",
        re.compile(
            r"\b(500|502|503|504)\b|\bUNAVAILABLE\b|ECONNRESET|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|"
            r"EAI_AGAIN|fetch failed|overloaded",
            re.I,
        ),
        GeminiUnavailable,
    ),
)
# Codes in the CLI's JSON `error.code` (or its exit code) that need no text matching.
_CODE_CLASSES: dict[int, type[GeminiError]] = {
    41: GeminiAuthError,
    55: GeminiUntrusted,
    401: GeminiAuthError,
    403: GeminiAuthError,
    429: GeminiQuotaError,
    500: GeminiUnavailable,
    502: GeminiUnavailable,
    503: GeminiUnavailable,
    504: GeminiUnavailable,
}
_HINTS: dict[type[GeminiError], str] = {
    GeminiAuthError: AUTH_HINT,
    GeminiQuotaError: QUOTA_HINT,
    GeminiUntrusted: UNTRUSTED_HINT,
    GeminiModelError: MODEL_HINT,
    GeminiUnavailable: UNAVAILABLE_HINT,
    GeminiBadResponse: BAD_RESPONSE_HINT,
}
_NOISE = re.compile(r"^(at |Warning: 256-color|Ripgrep is not available|\}|\{|exitCode)")


# --- where things are -------------------------------------------------------------------


def _executable(value: str) -> Path | None:
    if os.sep not in value and "/" not in value:
        found = shutil.which(value)
        return Path(found) if found else None
    path = Path(value).expanduser()
    return path if path.is_file() and os.access(path, os.X_OK) else None


def find_gemini_binary(settings: Settings) -> Path | None:
    """`GEMINI_CLI` if set (and only it), else `gemini` on PATH, else ~/.local/bin/gemini."""
    if settings.gemini_cli:
        return _executable(settings.gemini_cli)
    return _executable("gemini") or _executable("~/.local/bin/gemini")


def _seeded_dir(folder: Path) -> Path:
    """A configured folder may be the `.gemini` folder itself or a home that contains one."""
    return folder / ".gemini" if (folder / ".gemini").is_dir() else folder


def configured_oauth_dir(settings: Settings) -> Path | None:
    """The seeded `.gemini` folder we point the CLI at, if any.

    `GEMINI_OAUTH_DIR`: the `.gemini` folder (holding oauth_creds.json) or its parent. The
    Docker image sets it to its `docker/gemini-oauth` bind mount; nothing is looked up
    relative to the source tree.
    """
    if settings.gemini_oauth_dir:
        return _seeded_dir(Path(settings.gemini_oauth_dir).expanduser())
    return None


def oauth_dir(settings: Settings, environ: Mapping[str, str] | None = None) -> Path:
    """Where the CLI will look for oauth_creds.json when we start it."""
    configured = configured_oauth_dir(settings)
    if configured is not None:
        return configured
    env = os.environ if environ is None else environ
    home = env.get("GEMINI_CLI_HOME") or str(Path.home())
    return Path(home).expanduser() / ".gemini"


def gemini_oauth_ready(settings: Settings) -> bool:
    """Is a Google-account login seeded where the CLI will look? (for `doctor`/start-up)"""
    return (oauth_dir(settings) / CREDS_FILE).is_file()


def _private_root() -> Path:
    """A per-user 0700 folder in the system temp dir, outside any project."""
    root = Path(tempfile.gettempdir()) / f"stream-browser-gemini-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    info = root.lstat()
    if root.is_symlink() or not root.is_dir() or info.st_uid != os.getuid():
        raise GeminiCliError(
            f"unsafe temporary folder {root}",
            hint=f"remove {root} (it must be a folder owned by you)",
        )
    return root


def _dotenv_above(folder: Path) -> Path | None:
    for parent in (folder, *folder.parents):
        for candidate in (parent / ".env", parent / ".gemini" / ".env"):
            if candidate.exists():
                return candidate
    return None


def private_workdir() -> Path:
    """The CLI's working directory: empty, private, with no `.env` above it to load a key."""
    workdir = _private_root() / "cwd"
    workdir.mkdir(mode=0o700, exist_ok=True)
    found = _dotenv_above(workdir)
    if found is not None:
        raise GeminiCliError(
            f"{found} would be loaded by the Gemini CLI and could switch it to an API key",
            hint="remove that file, or set TMPDIR to a folder with no .env above it",
        )
    return workdir


# What a seeded login is made of; a read-only seed is copied into a private home of these.
LOGIN_FILES = (CREDS_FILE, "google_accounts.json", "settings.json", "installation_id")


def writable_home(seeded: Path) -> Path:
    """A private home whose `.gemini` holds copies of a read-only seeded login.

    The CLI writes beside its credentials (`projects.json`, refreshed tokens, session
    records) and, when it cannot, fails before any request (0.61: "EACCES ... projects.json",
    exit 1): a login bind-mounted read-only, as the container mounts it, would fail every
    call. A copy is refreshed when the seed is newer.
    """
    home = _private_root() / "home-rw"
    target = home / ".gemini"
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    for name in LOGIN_FILES:
        source, copy = seeded / name, target / name
        if not source.is_file():
            continue
        if copy.is_file() and copy.stat().st_mtime >= source.stat().st_mtime:
            continue
        shutil.copyfile(source, copy)
        os.chmod(copy, 0o600)
    return home


def cli_home(settings: Settings) -> Path | None:
    """The GEMINI_CLI_HOME for the child (None: leave the user's own home alone)."""
    seeded = configured_oauth_dir(settings)
    if seeded is None:
        return None
    if not os.access(seeded, os.W_OK):
        return writable_home(seeded)
    if seeded.name == ".gemini":
        return seeded.parent
    shim = _private_root() / "home"
    shim.mkdir(mode=0o700, exist_ok=True)
    link = shim / ".gemini"
    if not (link.is_symlink() and link.resolve() == seeded.resolve()):
        with contextlib.suppress(FileNotFoundError):
            link.unlink()
        with contextlib.suppress(FileExistsError):  # a concurrent call made the same link
            link.symlink_to(seeded.resolve(), target_is_directory=True)
    return shim


# --- the child process ------------------------------------------------------------------


def build_argv(binary: Path | str, query: str, model: str | None = None) -> list[str]:
    """Headless JSON run in the default approval mode (never --yolo).

    A query starting with "-" is passed as `--prompt=QUERY`: `-p --help` would print the
    help (exit 0) instead of asking. NUL cannot be passed in an argument: it becomes a space.
    """
    query = query.replace("\x00", " ")
    prompt = ["--prompt=" + query] if query.startswith("-") else ["-p", query]
    argv = [str(binary), *prompt, "-o", "json", "--skip-trust"]
    return [*argv, "-m", model] if model else argv


def _is_dropped(name: str) -> bool:
    return name.upper() in _DROPPED_VARS or is_credential_name(name)


def child_env(settings: Settings, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment without keys or a display, forced to the account login."""
    source = os.environ if environ is None else environ
    env = {name: value for name, value in source.items() if not _is_dropped(name)}
    env.update(_FORCED_VARS)
    home = cli_home(settings)
    if home is not None:
        env["GEMINI_CLI_HOME"] = str(home)
    elif "GEMINI_CLI_HOME" in source:
        env["GEMINI_CLI_HOME"] = source["GEMINI_CLI_HOME"]
    return env


@dataclass(frozen=True)
class CliRun:
    """How one CLI run ended."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    elapsed_ms: int


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _kill_group(proc: asyncio.subprocess.Process, grace_s: float) -> None:
    """SIGTERM the whole group, give it `grace_s`, then SIGKILL whatever is left, and reap."""
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), grace_s)
    _signal_group(proc.pid, signal.SIGKILL)
    await proc.wait()


def _text(task: asyncio.Future[bytes]) -> str:
    if not task.done() or task.cancelled() or task.exception() is not None:
        return ""
    return task.result().decode("utf-8", errors="replace")


async def run_cli(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout_s: float
) -> CliRun:
    """Run the CLI in its own session; on timeout kill the whole process group."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    reads = [asyncio.ensure_future(proc.stdout.read()), asyncio.ensure_future(proc.stderr.read())]
    waiter = asyncio.ensure_future(proc.wait())
    try:
        _, pending = await asyncio.wait([*reads, waiter], timeout=timeout_s)
        if pending:
            await _kill_group(proc, KILL_GRACE_S)
    finally:  # also when the caller cancelled us: no process may outlive the call
        _signal_group(proc.pid, signal.SIGKILL)
        await asyncio.wait([waiter, *reads], timeout=DRAIN_S)
        for task in (*reads, waiter):
            task.cancel()
    return CliRun(
        exit_code=None if pending else proc.returncode,
        stdout=_text(reads[0]),
        stderr=_text(reads[1]),
        timed_out=bool(pending),
        elapsed_ms=int((time.monotonic() - started) * 1000),
    )


# --- reading what it said ---------------------------------------------------------------

_LINE_START_BRACE = re.compile(r"^\{", re.M)


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object that starts a line of `text` (the CLI pretty-prints)."""
    decoder = json.JSONDecoder()
    for match in list(_LINE_START_BRACE.finditer(text))[:20]:
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _error_of(*payloads: dict[str, Any] | None) -> dict[str, Any]:
    for payload in payloads:
        error = (payload or {}).get("error")
        if isinstance(error, dict):
            return error
    return {}


def _summary(text: str, match: re.Match[str] | None = None, limit: int = 300) -> str:
    """One informative line: the one holding `match`, else the first that is not noise."""
    if match is not None:
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        return text[start : end if end != -1 else None].strip()[:limit]
    for line in text.splitlines():
        line = line.strip()
        if line and not _NOISE.match(line):
            return line[:limit]
    return ""


def _classify_text(text: str) -> tuple[type[GeminiError], str] | None:
    for _name, pattern, error_class in CLI_ERROR_PATTERNS:
        match = pattern.search(text)
        if match is not None:
            return error_class, _summary(text, match)
    return None


def _code(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def classify_failure(run: CliRun, stdout_json: dict[str, Any] | None) -> GeminiError:
    """Turn a failed run into the matching GeminiError leaf (codes first, then text)."""
    if run.timed_out:
        return GeminiTimeout(
            f"the Gemini CLI gave no answer within {run.elapsed_ms} ms and was killed",
            hint=TIMEOUT_HINT,
            elapsed_ms=run.elapsed_ms,
        )
    error = _error_of(stdout_json, first_json_object(run.stderr))
    message = str(error.get("message") or "")
    text = "\n".join(part for part in (message, run.stderr) if part)
    found = _classify_text(text)
    for code in (_code(error.get("code")), run.exit_code):
        if code in _CODE_CLASSES:
            error_class = _CODE_CLASSES[code]
            detail = found[1] if found and found[0] is error_class else _summary(text)
            return _make(error_class, detail, run)
    if found is not None:
        return _make(found[0], found[1], run)
    if run.exit_code == 0 and not run.stdout.strip():
        return GeminiCliError(
            "the Gemini CLI exited 0 with no output", exit_code=0, hint=CLI_ERROR_HINT
        )
    if run.exit_code == 0:
        return GeminiBadResponse(
            f"the Gemini CLI printed no usable JSON answer: {_summary(run.stdout, limit=120)!r}",
            hint=CLI_ERROR_HINT,
            exit_code=0,
        )
    return GeminiCliError(
        f"the Gemini CLI failed with exit code {run.exit_code}: {_summary(text) or 'no message'}",
        exit_code=run.exit_code,
        hint=CLI_ERROR_HINT,
    )


def _make(error_class: type[GeminiError], detail: str, run: CliRun) -> GeminiError:
    message = f"Gemini CLI: {detail or 'no message'} (exit code {run.exit_code})"
    if error_class is GeminiCliError:
        return GeminiCliError(message, exit_code=run.exit_code, hint=CLI_ERROR_HINT)
    return error_class(message, hint=_HINTS.get(error_class), exit_code=run.exit_code)


def _roles(entry: Any) -> set[str]:
    roles = entry.get("roles") if isinstance(entry, dict) else None
    return set(roles) if isinstance(roles, dict) else set()


def _model_of(stats: Any) -> str | None:
    """The model that answered: the one in role `main` (the last listed, after a fallback),
    not the first key (the utility router's). Without roles: the first model listed."""
    models = stats.get("models") if isinstance(stats, dict) else None
    if not isinstance(models, dict) or not models:
        return None
    main = [name for name, entry in models.items() if "main" in _roles(entry)]
    return main[-1] if main else next(iter(models))


def interpret(run: CliRun) -> GeminiAnswer:
    """The answer in a successful run's JSON (its `[n]` markers still unresolved), or raise
    the matching GeminiError."""
    payload = _payload(run)
    response = (payload or {}).get("response")
    ok = run.exit_code == 0 and not (payload or {}).get("error")
    if ok and isinstance(response, str) and response.strip():
        return GeminiAnswer(
            text=response.strip(),
            sources=urls_in_text(response),
            model=_model_of((payload or {}).get("stats")),
            auth="oauth",
        )
    if ok and payload is not None:
        raise GeminiBadResponse(
            "the Gemini CLI returned an empty answer", hint=CLI_ERROR_HINT, exit_code=0
        )
    raise classify_failure(run, payload)


def _payload(run: CliRun) -> dict[str, Any] | None:
    return None if run.timed_out else first_json_object(run.stdout)


def session_id_of(run: CliRun) -> str | None:
    """The run's session id, from the answer on stdout or the error JSON on stderr."""
    for payload in (_payload(run), first_json_object(run.stderr)):
        found = valid_session_id((payload or {}).get("session_id"))
        if found is not None:
            return found
    return None


# --- the run's session record -----------------------------------------------------------

_VERSION = re.compile(r"^\d+\.\d+\.\d+\S*$")
_versions: dict[tuple[str, float], str] = {}


def _packaged_version(binary: Path) -> str | None:
    """The version in the npm package the binary belongs to (`.bin/gemini` is a link)."""
    with contextlib.suppress(OSError):
        for folder in list(binary.resolve().parents)[:4]:
            with contextlib.suppress(OSError, ValueError):
                package = json.loads((folder / "package.json").read_text(encoding="utf-8"))
                if isinstance(package, dict) and package.get("name") == "@google/gemini-cli":
                    return str(package.get("version"))
    return None


async def cli_version(binary: Path, env: Mapping[str, str], cwd: Path) -> str:
    """The CLI's version, for a warning: its package.json, else `--version` (bounded, once
    per binary)."""
    try:
        key = (str(binary), binary.stat().st_mtime)
    except OSError:
        return "unknown"
    if key not in _versions:
        found = _packaged_version(binary)
        if found is None:
            run = await run_cli(
                [str(binary), "--version"], env=env, cwd=cwd, timeout_s=VERSION_TIMEOUT_S
            )
            line = run.stdout.strip().splitlines()[-1:] if run.exit_code == 0 else []
            found = line[0] if line and _VERSION.match(line[0]) else "unknown"
        _versions[key] = found
    return _versions[key]


def _tool_successes(stats: Any, name: str) -> int:
    tools = stats.get("tools") if isinstance(stats, dict) else None
    by_name = tools.get("byName") if isinstance(tools, dict) else None
    entry = by_name.get(name) if isinstance(by_name, dict) else None
    count = entry.get("success") if isinstance(entry, dict) else None
    return count if isinstance(count, int) else 0


def _read_run_record(home: Path, workdir: Path, session_id: str | None, stats: Any) -> RunRecord:
    if session_id is None:
        raise RecordError("the CLI's JSON answer has no session_id")
    found = find_record(home, workdir, session_id)
    if found is None:
        raise RecordError(f"no session record for {session_id[:8]} under {home / 'tmp'}")
    record = read_record(found[1], session_id)
    if len(record.searches) < _tool_successes(stats, "google_web_search"):
        raise RecordError(f"{found[1].name} holds fewer search outputs than the CLI ran")
    return record


async def with_sources(
    answer: GeminiAnswer,
    run: CliRun,
    *,
    binary: Path,
    env: Mapping[str, str],
    workdir: Path,
) -> GeminiAnswer:
    """The answer with its `[n]` markers resolved to the run's search sources (and the
    model of its last main turn). The record unreadable: URLs in the text, one warning."""
    stats = (_payload(run) or {}).get("stats")
    try:
        record = _read_run_record(gemini_dir(dict(env)), workdir, session_id_of(run), stats)
    except Exception as exc:  # never fail the answer for its sources
        version = await cli_version(binary, env, workdir)
        reason = str(exc) if isinstance(exc, RecordError) else type(exc).__name__
        log.warning(
            "gemini.cli.sources_unread", reason=reason, cli_version=version, hint=RECORD_HINT
        )
        text, sources = cite(answer.text, ())
        return answer.model_copy(update={"text": text, "sources": sources})
    text, sources = cite(answer.text, record.searches)
    update = {"text": text, "sources": sources, "search_queries": list(record.queries)}
    return answer.model_copy(update={**update, "model": record.model or answer.model})


_ERROR_REPORT = re.compile(r"Full report available at: (\S+/gemini-client-error-[\w.:-]+\.json)")


def _error_reports(run: CliRun, env: Mapping[str, str]) -> list[Path]:
    """The error reports the CLI wrote to its temp folder (they hold the whole request);
    Node's `os.tmpdir()`: TMPDIR, TMP, TEMP, else /tmp."""
    tmp = Path(env.get("TMPDIR") or env.get("TMP") or env.get("TEMP") or "/tmp").resolve()
    reports = (Path(match) for match in _ERROR_REPORT.findall(run.stderr))
    return [path for path in reports if path.parent.resolve() == tmp]


def forget_run(run: CliRun, *, env: Mapping[str, str], workdir: Path) -> int:
    """Delete what the CLI kept of this run (record, logs, error reports), and of earlier
    runs killed at their timeout (their session id was never printed); how many went."""
    home, session_id = gemini_dir(dict(env)), session_id_of(run)
    paths = _error_reports(run, env) + stale_runs(home, workdir, time.time())
    if session_id is not None:
        found = find_record(home, workdir, session_id)
        project = found[0] if found else registered_project(home, workdir)
        if project is not None:  # no record: its logs may still be in our project folder
            paths += run_files(project, found[1] if found else None, session_id)
    removed = remove_paths(paths)
    log.debug("gemini.cli.run_forgotten", files=len(removed))
    return len(removed)


# --- the entry point --------------------------------------------------------------------


def check_query(query: str) -> str:
    """Reject an empty query (an empty -p would start the interactive UI)."""
    if not query or not query.strip():
        raise ValueError("the query is empty")
    return query


async def _spawn(argv: list[str], settings: Settings, env: Mapping[str, str], cwd: Path) -> CliRun:
    try:
        return await run_cli(argv, env=env, cwd=cwd, timeout_s=settings.gemini_timeout_s)
    except (FileNotFoundError, PermissionError) as exc:
        raise GeminiCliMissing(
            f"cannot run the Gemini CLI at {argv[0]}: {exc.strerror}", hint=INSTALL_HINT
        ) from exc
    except OSError as exc:
        raise GeminiCliError(f"cannot start the Gemini CLI: {exc}", hint=CLI_ERROR_HINT) from exc


async def ask_cli(query: str, settings: Settings) -> GeminiAnswer:
    """Ask the Gemini CLI (account login); raise a GeminiError leaf on any failure."""
    query = check_query(query)
    binary = find_gemini_binary(settings)
    if binary is None:
        where = settings.gemini_cli or "PATH or ~/.local/bin"
        raise GeminiCliMissing(f"no gemini executable found ({where})", hint=INSTALL_HINT)
    env, cwd = child_env(settings), private_workdir()
    run = await _spawn(build_argv(binary, query, settings.gemini_model), settings, env, cwd)
    log.debug(
        "gemini.cli.exited",
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        elapsed_ms=run.elapsed_ms,
        stdout_chars=len(run.stdout),
        stderr_chars=len(run.stderr),
    )
    try:
        answer = interpret(run)
        return await with_sources(answer, run, binary=binary, env=env, workdir=cwd)
    finally:
        if not settings.gemini_keep_sessions:
            _forget_quietly(run, env, cwd)


def _forget_quietly(run: CliRun, env: Mapping[str, str], cwd: Path) -> None:
    try:
        forget_run(run, env=env, workdir=cwd)
    except Exception as exc:  # cleaning up must never cost the answer
        log.warning("gemini.cli.forget_failed", error_type=type(exc).__name__)
