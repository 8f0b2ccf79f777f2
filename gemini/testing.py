"""Fakes for the two Gemini seams, shipped beside them for tests (and for demos offline).

`write_fake_gemini` writes an executable `gemini` that records how it was started (argv,
environment, cwd, process group) and replays a canned behaviour, including a hang with a
child process to prove the whole group is killed. Like the real CLI (0.61) it prints
`{"session_id", "response", "stats"}` with `[n]` markers in the response and writes the
run's session record (where the URLs are) under `~/.gemini/tmp/<cwd name>/chats/`; it
never touches the user's `projects.json`. `FakeGeminiApi` is a loopback HTTP server
standing in for generateContent, with scripted replies per model and recorded requests;
`LoopbackApi` is its server lifecycle, shared with other loopback stand-ins.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, Self, TypeVar
from urllib.parse import unquote

CALLS_FILE = "gemini-calls.jsonl"
FAKE_VERSION = "0.61.0-fake"  # what the fake prints for `gemini --version`
SESSION_ID = "@SESSION_ID@"  # replaced by a fresh UUID on each run of the fake
QUERY = "@QUERY@"  # replaced by the prompt the fake was given
ROUTER_MODEL, MAIN_MODEL, SEARCH_MODEL = (
    "gemini-3.5-flash-lite",
    "gemini-3.8-flash",
    "gemini-3-flash",
)

CLI_ANSWER = (
    "The sky looks blue because air molecules scatter short (blue) wavelengths of sunlight "
    "much more than long ones: Rayleigh scattering [1][2]."
)
CLI_SOURCES = (
    ("en.wikipedia.org", "https://en.wikipedia.org/wiki/Rayleigh_scattering"),
    ("britannica.com", "https://www.britannica.com/science/Rayleigh-scattering"),
)
# An answer whose record is gone: its markers cannot be resolved, its one URL can.
CLI_ANSWER_WITH_URL = (
    "Rayleigh scattering makes the sky blue [1][2]. See "
    "https://en.wikipedia.org/wiki/Rayleigh_scattering."
)
AUTH_TEXT = (
    "Warning: 256-color support not detected. Using a terminal with at least 256-color "
    "support is recommended for a better visual experience.\n"
    "Error authenticating: FatalAuthenticationError: Manual authorization is required but the "
    "current session is non-interactive. Please run the Gemini CLI in an interactive terminal "
    "to log in, provide a GEMINI_API_KEY, or ensure Application Default Credentials are "
    "configured.\n    at initOauthClient (file:///gemini/bundle/chunk.js:1:1) {\n"
    "  exitCode: 41\n}\n"
)
QUOTA_TEXT = (
    "Error when talking to Gemini API Full report available at: /tmp/gemini-client-error.json\n"
    "[API Error: You have exhausted your capacity on this model. Your quota will reset after "
    "2h. (Status: RESOURCE_EXHAUSTED)]\n"
)


@dataclass(frozen=True)
class FakeBehaviour:
    """What the fake CLI does: print these (SESSION_ID filled in), exit with this code, or
    hang (with a child), and write `session` as its session record (JSON lines; SESSION_ID
    and QUERY filled in)."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    hang: bool = False
    session: tuple[dict[str, Any], ...] | None = None


def _json(value: Any) -> str:
    return json.dumps(value, indent=2) + "\n"


def _role_stats(role: str, requests: int) -> dict[str, Any]:
    api = {"totalRequests": requests, "totalErrors": 0, "totalLatencyMs": 40 * requests}
    tokens = {"input": 20, "prompt": 20, "candidates": 10, "total": 30, "cached": 0}
    return {"api": {**api, "errorsByType": {}}, "tokens": tokens, "roles": {role: api}}


def cli_stats(searches: int = 1, main_model: str = MAIN_MODEL) -> dict[str, Any]:
    """`stats` as 0.61 prints it: the router first, then the main model, then the search's."""
    models = {ROUTER_MODEL: _role_stats("utility_router", 1), main_model: _role_stats("main", 2)}
    if searches:
        models[SEARCH_MODEL] = _role_stats("utility_tool", searches)
    by_name = {"google_web_search": {"count": searches, "success": searches, "fail": 0}}
    return {
        "models": models,
        "tools": {"totalCalls": searches, "totalSuccess": searches, "byName": by_name},
        "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0},
    }


def cli_output(response: str, searches: int = 1, main_model: str = MAIN_MODEL) -> str:
    """What `gemini -p ... -o json` prints on success."""
    stats = cli_stats(searches, main_model)
    return _json({"session_id": SESSION_ID, "response": response, "stats": stats})


def search_output(sources: tuple[tuple[str, str], ...], query: str = QUERY) -> str:
    """The `google_web_search` tool's output, as the CLI builds it from groundingMetadata."""
    listed = "\n".join(f"[{n}] {title} ({url})" for n, (title, url) in enumerate(sources, 1))
    summary = "Air scatters short wavelengths most.[1][2]"
    return f'Web search results for "{query}":\n\n{summary}\n\nSources:\n{listed}'


def _turn(message_id: str, model: str, content: str, **extra: Any) -> dict[str, Any]:
    stamp = "2026-12-01T09:42:00.000Z"
    tokens = {"input": 10, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 15}
    return {
        "id": message_id,
        "timestamp": stamp,
        "type": "gemini",
        "content": content,
        "thoughts": [],
        "tokens": tokens,
        "model": model,
        **extra,
    }


def session_record(
    response: str,
    searches: tuple[tuple[tuple[str, str], ...], ...] = (CLI_SOURCES,),
    model: str = MAIN_MODEL,
) -> tuple[dict[str, Any], ...]:
    """A session record in 0.61's shape: metadata, the question, a turn per search (written
    twice, the second time with its tool call and result), the tool results, the answer."""
    stamp = "2026-12-01T09:42:00.000Z"
    head = {
        "sessionId": SESSION_ID,
        "projectHash": "0" * 64,
        "startTime": stamp,
        "lastUpdated": stamp,
        "kind": "main",
    }
    records: list[dict[str, Any]] = [
        head,
        {"id": "u0", "timestamp": stamp, "type": "user", "content": [{"text": QUERY}]},
        {"$set": {"lastUpdated": stamp}},
    ]
    for n, sources in enumerate(searches):
        call_id = f"google_web_search__google_web_search_{n}"
        reply = {
            "id": call_id,
            "name": "google_web_search",
            "response": {"output": search_output(sources)},
        }
        call = {
            "id": call_id,
            "name": "google_web_search",
            "args": {"query": QUERY},
            "result": [{"functionResponse": reply}],
            "status": "success",
        }
        records += [
            _turn(f"g{n}", model, ""),
            _turn(f"g{n}", model, "", toolCalls=[call]),
            {
                "id": f"r{n}",
                "timestamp": stamp,
                "type": "user",
                "content": [{"functionResponse": reply}],
            },
        ]
    return (*records, _turn("answer", model, response), {"$set": {"lastUpdated": stamp}})


BEHAVIOURS: dict[str, FakeBehaviour] = {
    "success": FakeBehaviour(stdout=cli_output(CLI_ANSWER), session=session_record(CLI_ANSWER)),
    # The CLI answered but kept no record (an older or newer CLI, a full disk).
    "no-record": FakeBehaviour(stdout=cli_output(CLI_ANSWER_WITH_URL)),
    # A record this code cannot read: turns of a type it does not know.
    "changed-record": FakeBehaviour(
        stdout=cli_output(CLI_ANSWER_WITH_URL),
        session=tuple(
            {**r, "type": "model"} if r.get("type") == "gemini" else r
            for r in session_record(CLI_ANSWER_WITH_URL)
        ),
    ),
    "error-json": FakeBehaviour(
        exit_code=1,
        stderr=_json(
            {
                "session_id": "fake-session",
                "error": {
                    "type": "Error",
                    "message": "Tool execution failed: internal error",
                    "code": 1,
                },
            }
        ),
    ),
    "auth-exit-41": FakeBehaviour(exit_code=41, stderr=AUTH_TEXT),
    "quota": FakeBehaviour(exit_code=1, stderr=QUOTA_TEXT),
    "garbage": FakeBehaviour(stdout="<html>Service Unavailable</html>\nnot json at all\n"),
    "empty": FakeBehaviour(),
    "untrusted": FakeBehaviour(
        exit_code=55,
        stderr=(
            "Gemini CLI is not running in a trusted directory. To proceed, either use "
            "`--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or "
            "trust this directory in interactive mode.\n"
        ),
    ),
    "hang": FakeBehaviour(stdout="Do you want to continue? [Y/n] ", hang=True),
}

_SCRIPT = '''#!{python}
"""Fake `gemini` written by gemini.testing.write_fake_gemini: records its start, replays."""
import json, os, signal, subprocess, sys, time, uuid

HERE = os.path.dirname(os.path.abspath(__file__))
BEHAVIOUR = json.loads({behaviour!r})
if sys.argv[1:] == ["--version"]:
    print({version!r})
    sys.exit(0)
SESSION = str(uuid.uuid4())
ARGS = sys.argv[1:]
QUERY = ARGS[ARGS.index("-p") + 1] if "-p" in ARGS[:-1] else next(
    (a[len("--prompt="):] for a in ARGS if a.startswith("--prompt=")), "")


def fill(value):
    if isinstance(value, dict):
        return {{k: fill(v) for k, v in value.items()}}
    if isinstance(value, list):
        return [fill(v) for v in value]
    if isinstance(value, str):
        return value.replace({session_mark!r}, SESSION).replace({query_mark!r}, QUERY)
    return value


def write_session(records):
    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    chats = os.path.join(home, ".gemini", "tmp", os.path.basename(os.getcwd()), "chats")
    os.makedirs(chats, exist_ok=True)
    name = "session-" + time.strftime("%Y-%m-%dT%H-%M") + "-" + SESSION[:8] + ".jsonl"
    with open(os.path.join(chats, name), "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(fill(r)) + "\\n" for r in records)


def stdin_is_devnull():
    try:
        return os.fstat(0).st_rdev == os.stat(os.devnull).st_rdev
    except OSError:
        return None


record = {{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(),
          "pid": os.getpid(), "pgid": os.getpgid(0), "sid": os.getsid(0),
          "stdin_devnull": stdin_is_devnull(), "child_pid": None}}
if BEHAVIOUR["hang"]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # like the CLI: SIGTERM alone does nothing
    child = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)"])
    record["child_pid"] = child.pid
with open(os.path.join(HERE, {calls!r}), "a", encoding="utf-8") as fh:
    fh.write(json.dumps(record) + "\\n")
if BEHAVIOUR["session"] is not None:
    write_session(BEHAVIOUR["session"])
sys.stdout.write(BEHAVIOUR["stdout"].replace({session_mark!r}, SESSION))
sys.stdout.flush()
sys.stderr.write(BEHAVIOUR["stderr"].replace({session_mark!r}, SESSION))
sys.stderr.flush()
while BEHAVIOUR["hang"]:
    time.sleep(3600)
sys.exit(BEHAVIOUR["exit_code"])
'''


def write_fake_gemini(directory: Path | str, behaviour: str | FakeBehaviour = "success") -> Path:
    """Write an executable `gemini` into `directory` that replays `behaviour`.

    Each run appends a JSON line to `directory/gemini-calls.jsonl` (see `fake_calls`);
    `--version` prints FAKE_VERSION and is not recorded. The shebang is this Python's
    absolute path, so it works on a narrowed PATH.
    """
    spec = BEHAVIOURS[behaviour] if isinstance(behaviour, str) else behaviour
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "gemini"
    path.write_text(
        _SCRIPT.format(
            python=sys.executable,
            behaviour=json.dumps(asdict(spec)),
            calls=CALLS_FILE,
            version=FAKE_VERSION,
            session_mark=SESSION_ID,
            query_mark=QUERY,
        ),
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def session_files(home: Path | str) -> list[Path]:
    """Every session record (and session log) under `home`'s `.gemini/tmp`, sorted."""
    tmp = Path(home) / ".gemini" / "tmp"
    return sorted(p for p in tmp.glob("*/*/session-*") if p.parent.name in ("chats", "logs"))


def fake_calls(directory: Path | str) -> list[dict[str, Any]]:
    """What each run of the fake in `directory` recorded, oldest first."""
    path = Path(directory) / CALLS_FILE
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


# --- the REST API -----------------------------------------------------------------------

GROUNDED_PARTS = (
    "Der Himmel ist blau, weil Luftmoleküle kurzwelliges Licht stärker streuen "
    "(Rayleigh-Streuung).",
    " Bei Sonnenuntergang überwiegen Rot- und Orangetöne — 夕焼け.",
    " Lord Rayleigh beschrieb das Phänomen 1871.",
)
GROUNDED_CHUNKS = (
    ("de.wikipedia.org", "https://vertexaisearch.cloud.google.com/grounding-api-redirect/A1"),
    ("nasa.gov", "https://vertexaisearch.cloud.google.com/grounding-api-redirect/B2"),
    ("britannica.com", "https://vertexaisearch.cloud.google.com/grounding-api-redirect/C3"),
    ("de.wikipedia.org", "https://vertexaisearch.cloud.google.com/grounding-api-redirect/A1"),
)
# Sentence i is supported by these chunk indices (chunk 3 repeats chunk 0's URL).
GROUNDED_SUPPORTS = ((0, 1), (1,), (2, 3))
GROUNDED_QUERIES = ("warum ist der himmel blau", "rayleigh streuung")


def grounded_payload(model: str) -> dict[str, Any]:
    """A grounded generateContent reply whose support offsets are UTF-8 byte offsets."""
    supports, offset = [], 0
    for sentence, chunks in zip(GROUNDED_PARTS, GROUNDED_SUPPORTS, strict=True):
        size = len(sentence.encode("utf-8"))
        supports.append(
            {
                "segment": {"startIndex": offset, "endIndex": offset + size, "text": sentence},
                "groundingChunkIndices": list(chunks),
            }
        )
        offset += size
    parts = [{"text": GROUNDED_PARTS[0]}, {"text": "".join(GROUNDED_PARTS[1:])}]
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "groundingMetadata": {
                    "webSearchQueries": list(GROUNDED_QUERIES),
                    "groundingChunks": [
                        {"web": {"uri": uri, "title": title}} for title, uri in GROUNDED_CHUNKS
                    ],
                    "groundingSupports": supports,
                },
            }
        ],
        "modelVersion": model,
    }


def echo_payload(model: str, key: str) -> dict[str, Any]:
    """A grounded reply with `key` in its text, a source title and URL, and a search query."""
    payload = grounded_payload(model)
    candidate = payload["candidates"][0]
    candidate["content"]["parts"].append({"text": f" Your key is {key}."})
    metadata = candidate["groundingMetadata"]
    metadata["groundingChunks"][0]["web"] = {"uri": f"https://e.example/?k={key}", "title": key}
    metadata["webSearchQueries"].append(f"key {key}")
    return payload


_QUOTA_METRIC = "generativelanguage.googleapis.com/generate_content_free_tier_requests"


def _error(code: int, status: str, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, "details": list(details)}}


_RPC = "type.googleapis.com/google.rpc."
CANNED: dict[str, tuple[int, dict[str, Any]]] = {
    "quota": (
        429,
        _error(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota.",
            {
                "@type": _RPC + "QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": _QUOTA_METRIC,
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                    }
                ],
            },
            {"@type": _RPC + "RetryInfo", "retryDelay": "33s"},
        ),
    ),
    "quota-daily": (
        429,
        _error(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota.",
            {
                "@type": _RPC + "QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": _QUOTA_METRIC,
                        "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                    }
                ],
            },
            {"@type": _RPC + "RetryInfo", "retryDelay": "3600s"},
        ),
    ),
    "invalid-key": (
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            {"@type": _RPC + "ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"},
        ),
    ),
    "unauthorized": (401, _error(401, "UNAUTHENTICATED", "Request is missing credentials.")),
    "forbidden": (
        403,
        _error(
            403,
            "PERMISSION_DENIED",
            "Generative Language API has not been used in project 1.",
            {"@type": _RPC + "ErrorInfo", "reason": "SERVICE_DISABLED"},
        ),
    ),
    "not-found": (404, _error(404, "NOT_FOUND", "models/x is not found for API version v1beta")),
    "server-error": (500, _error(500, "INTERNAL", "An internal error has occurred.")),
    "unavailable": (503, _error(503, "UNAVAILABLE", "The model is overloaded.")),
    "blocked": (200, {"promptFeedback": {"blockReason": "SAFETY"}}),
}
SCENARIOS = ("grounded", *CANNED, "leaky", "echo", "slow", "malformed", "drop", "redirect")


@dataclass
class RecordedRequest:
    """One request the fake API received."""

    method: str
    path: str
    model: str
    headers: dict[str, str]
    body: bytes
    json: Any = field(default=None)


ApiT = TypeVar("ApiT", bound="LoopbackApi")


class LoopbackHTTPServer(ThreadingHTTPServer, Generic[ApiT]):
    """The threaded HTTP server under a `LoopbackApi`; its handlers reach the API as `api`."""

    daemon_threads = True
    block_on_close = False
    api: ApiT

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out or was killed mid-request is expected here


class LoopbackApi:
    """A loopback stand-in's lifecycle: an HTTP server on 127.0.0.1:0 (the OS picks the
    port) serving `handler` in a daemon thread from `__enter__` until `close`/`__exit__`.
    Subclasses answer the requests; handlers reach the instance as `self.server.api`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server: LoopbackHTTPServer[Any] = LoopbackHTTPServer(("127.0.0.1", 0), handler)
        self._server.api = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, daemon=True, kwargs={"poll_interval": 0.05}
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackHTTPServer[FakeGeminiApi]
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        model = unquote(self.path.split("/models/", 1)[-1].split(":", 1)[0])
        self.server.api.record(self, model, body)
        self.server.api.reply(self, model)

    def do_GET(self) -> None:  # only reached by a client that follows a redirect
        self.server.api.record(self, "", b"")
        self.send_json(200, grounded_payload("redirected"))

    def send_json(self, status: int, payload: Any, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json; charset=UTF-8")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeGeminiApi(LoopbackApi):
    """Loopback stand-in for generateContent: `routes` maps a model id to a scenario.

    Use as a context manager; point `GEMINI_API_BASE` at `base_url`. Scenarios: see
    `SCENARIOS` ("slow" answers after `slow_s`, "drop" closes the connection unanswered).
    """

    def __init__(
        self,
        routes: Mapping[str, str] | None = None,
        *,
        default: str = "not-found",
        slow_s: float = 3.0,
    ) -> None:
        for scenario in (*(routes or {}).values(), default):
            if scenario not in SCENARIOS:
                raise ValueError(f"unknown scenario {scenario!r}; use one of {SCENARIOS}")
        self.routes = dict(routes or {})
        self.default = default
        self.slow_s = slow_s
        self.requests: list[RecordedRequest] = []
        self._stop = threading.Event()
        super().__init__(_Handler)

    def close(self) -> None:
        self._stop.set()  # a "slow" reply still waiting answers nothing
        super().close()

    def record(self, handler: _Handler, model: str, body: bytes) -> None:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        self.requests.append(
            RecordedRequest(
                method=handler.command,
                path=handler.path,
                model=model,
                headers={k.lower(): v for k, v in handler.headers.items()},
                body=body,
                json=parsed,
            )
        )

    def reply(self, handler: _Handler, model: str) -> None:
        scenario = self.routes.get(model, self.default)
        if scenario in CANNED:
            status, payload = CANNED[scenario]
            handler.send_json(status, payload)
        elif scenario == "grounded":
            handler.send_json(200, grounded_payload(model))
        elif scenario == "leaky":  # a server that echoes the key: our errors must scrub it
            echoed = handler.headers.get("x-goog-api-key", "")
            handler.send_json(400, _error(400, "INVALID_ARGUMENT", f"API key not valid: {echoed}"))
        elif scenario == "echo":  # a success that echoes the key: the envelope must not
            handler.send_json(200, echo_payload(model, handler.headers.get("x-goog-api-key", "")))
        elif scenario == "slow":
            if not self._stop.wait(self.slow_s):
                handler.send_json(200, grounded_payload(model))
        elif scenario == "malformed":
            handler.send_json(200, None, raw=b'{"candidates": [{"content": ')
        elif scenario == "redirect":
            handler.send_response(302)
            handler.send_header("location", self.base_url + "/steal")  # recorded if followed
            handler.send_header("content-length", "0")
            handler.end_headers()
        else:  # "drop": close the connection without an answer
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
