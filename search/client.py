"""The standard-library client of `stream-browser serve`: what the brain imports (or copies).

Imports only the Python standard library, so it runs under a bare `python3 -I -S`. Same
contract as the library: it never raises; `None` means "use your own search" (the service is
down, timed out, full or answered with an error), and the reason is logged with `logging`.

    from search.client import browse_and_search
    result = browse_and_search("why is the sky blue", broadcasting=True)  # dict or None

The service is found from `SB_SERVICE_URL` (`http://127.0.0.1:8765`, `unix:///path/sock`)
and `SB_SERVICE_TOKEN`, or the arguments; else `SB_SERVICE_SOCKET`, `SB_SERVICE_HOST`/`PORT`
(default 127.0.0.1:8765) and the token file `$SB_STATE_DIR/service-token`
(default `~/.cache/stream-browser/service-token`). Plain `http.client`, so proxy variables
never send these loopback calls elsewhere.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import socket
import sys
import threading
import time
from typing import Any

__all__ = [
    "DEFAULT_PORT",
    "Service",
    "browse",
    "browse_and_search",
    "error_message",
    "exchange",
    "find_service",
    "pause",
    "request",
    "resume",
    "status",
    "stop",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_TIMEOUT_S = 45.0  # the service's call deadline (25 s), Gemini's floor, a wait in line
MAX_REPLY_BYTES = 16 * 1024 * 1024  # an answer is a few KiB; anything near this is not one
TOKEN_FILE_NAME = "service-token"
CLIENT_AGENT = "stream-browser-client"  # the User-Agent this client sends
CLI_AGENT = "stream-browser-cli"  # the CLI's (the service's console shows the face)
MCP_AGENT = "stream-browser-mcp"  # the stdio MCP server's, when it forwards to the service
DEFAULT_STATE_DIR = "~/.cache/stream-browser"

log = logging.getLogger("stream_browser.client")


class Service:
    """Where the service listens and the token it wants."""

    def __init__(self, url: str, token: str | None, agent: str = CLIENT_AGENT) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.agent = agent

    def __repr__(self) -> str:  # never shows the token
        return f"Service({self.url!r}, token={'set' if self.token else 'missing'})"

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        if self.url.startswith("unix://"):
            return _UnixConnection(self.url[len("unix://") :], timeout)
        rest = self.url.split("://", 1)[-1].split("/", 1)[0]
        host, _, port = rest.rpartition(":")
        if not host or not port.isdigit():
            host, port = rest, "80"
        return http.client.HTTPConnection(host.strip("[]"), int(port), timeout=timeout)

    def host_header(self) -> str:
        if self.url.startswith("unix://"):
            return "localhost"
        return self.url.split("://", 1)[-1].split("/", 1)[0]


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def token_file() -> str:
    state = os.environ.get("SB_STATE_DIR") or DEFAULT_STATE_DIR
    return os.path.join(os.path.expanduser(state), TOKEN_FILE_NAME)


def _read_token_file() -> str | None:
    try:
        with open(token_file(), encoding="utf-8") as handle:
            return handle.read().strip() or None
    except (OSError, ValueError):  # missing, unreadable, or not UTF-8
        return None


def default_url() -> str:
    sock = os.environ.get("SB_SERVICE_SOCKET", "").strip()
    if sock:
        return "unix://" + os.path.expanduser(sock)
    host = os.environ.get("SB_SERVICE_HOST", "").strip() or DEFAULT_HOST
    port = os.environ.get("SB_SERVICE_PORT", "").strip() or str(DEFAULT_PORT)
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def find_service(url: str | None = None, token: str | None = None) -> Service | None:
    """The arguments, else the environment, else the default address and the token file.
    `None` when `SB_SERVICE_URL=off` (callers then stay in-process)."""
    url = url or os.environ.get("SB_SERVICE_URL", "").strip() or None
    if url is not None and url.lower() in ("off", "none", "false", "0"):
        return None
    token = token or os.environ.get("SB_SERVICE_TOKEN", "").strip() or _read_token_file()
    return Service(url or default_url(), token)


def exchange(
    method: str,
    path: str,
    body: dict[str, Any] | None,
    *,
    service: Service,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> tuple[int, dict[str, Any] | str]:
    """One call: (status, JSON or text). Raises `OSError` (`ConnectionRefusedError` or
    `FileNotFoundError` when nothing listens: the call never ran; `TimeoutError` when the
    whole exchange outlasts `timeout`) or `HTTPException`.

    `timeout` bounds the whole exchange, not each read: a reply trickled a byte at a time
    would pass every per-read timeout, so a watchdog shuts the socket at the deadline.
    """
    deadline = time.monotonic() + timeout
    conn = service.connection(timeout)
    watchdog: threading.Timer | None = None
    response: http.client.HTTPResponse | None = None
    try:
        payload = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {
            "Host": service.host_header(),
            "Accept": "application/json",
            "User-Agent": service.agent,
        }
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if service.token:
            headers["Authorization"] = "Bearer " + service.token
        conn.connect()
        sock = conn.sock
        watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), _cut, (sock,))
        watchdog.daemon = True
        watchdog.start()
        try:
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            raw = _read_bounded(response)
        except (OSError, http.client.HTTPException):
            if time.monotonic() >= deadline:  # the watchdog cut it
                raise TimeoutError(f"no answer within {timeout:.1f} s") from None
            raise
        if time.monotonic() >= deadline:  # cut mid-body: what arrived may look complete
            raise TimeoutError(f"no answer within {timeout:.1f} s")
        return response.status, _decode(raw, response.getheader("Content-Type", ""))
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if response is not None:  # also one cut mid-body: its socket is not left open
            response.close()
        conn.close()


def _cut(sock: socket.socket | None) -> None:
    """The deadline passed: wake the read blocked on `sock` (it then sees the end)."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _read_bounded(response: http.client.HTTPResponse) -> bytes:
    chunks, size = [], 0
    while chunk := response.read1(65536):
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise http.client.HTTPException(f"the answer exceeds {MAX_REPLY_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def request(
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    *,
    service: Service | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> tuple[int, dict[str, Any] | str] | None:
    """`exchange` that never raises: `None` (the reason logged) when there was no answer."""
    service = service or find_service()
    if service is None:
        log.info("stream-browser service disabled (SB_SERVICE_URL=off)")
        return None
    try:
        return exchange(method, path, body, service=service, timeout=timeout)
    except (ConnectionRefusedError, FileNotFoundError):
        log.warning("stream-browser service is not running at %s", service.url)
    except (TimeoutError, socket.timeout):  # noqa: UP041 (distinct before Python 3.10)
        log.warning("stream-browser service gave no answer within %.1f s", timeout)
    except (OSError, http.client.HTTPException) as exc:
        log.warning("stream-browser service at %s failed: %s", service.url, type(exc).__name__)
    except Exception as exc:  # never raise into the brain
        log.warning("stream-browser client error: %s", type(exc).__name__)
    return None


def _decode(raw: bytes, content_type: str) -> dict[str, Any] | str:
    text = raw.decode("utf-8", errors="replace")
    if "json" in content_type:
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, dict) else {"value": value}
    return text


def browse(
    query: str = "",
    *,
    action: str = "auto",
    url: str | None = None,
    broadcasting: bool | None = None,
    read_top: int = 0,
    engine: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    service_url: str | None = None,
    token: str | None = None,
) -> dict[str, Any] | None:
    """The whole answer: `{"result": dict | None, "chain": [hops]}`; `None` if none came.
    `engine` ("google", "bing"): a search on that engine alone."""
    body: dict[str, Any] = {"query": query, "action": action}
    if broadcasting is not None:
        body["broadcasting"] = broadcasting
    if url is not None:
        body["url"] = url
    if read_top:
        body["read_top"] = read_top
    if engine is not None:
        body["engine"] = engine
    try:
        service = find_service(service_url, token)
        answer = request("POST", "/v1/browse", body, service=service, timeout=timeout)
    except Exception as exc:  # never raise into the brain
        log.warning("stream-browser client error: %s", type(exc).__name__)
        return None
    if answer is None:
        return None
    status_code, data = answer
    if (
        status_code == 200
        and isinstance(data, dict)
        and isinstance(data.get("chain"), list)
        and (data.get("result") is None or isinstance(data.get("result"), dict))
    ):
        return data
    _log_refusal(status_code, data)
    return None


def error_message(data: dict[str, Any] | str) -> str:
    """The service's error body (`{"error": {"kind", "message", "fix"}}`) as one line."""
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        kind, message, fix = (str(error.get(k) or "") for k in ("kind", "message", "fix"))
        return f"{message} ({kind})" + (f"; fix: {fix}" if fix else "")
    if error:
        return str(error)
    return str(data)[:200]


def _log_refusal(status_code: int, data: dict[str, Any] | str) -> None:
    error = error_message(data)
    if status_code == 401:
        log.warning(
            "stream-browser service refused the token: set SB_SERVICE_TOKEN (or SB_STATE_DIR "
            "to the service's state directory, where its token file is)"
        )
    elif status_code == 429:
        log.warning("stream-browser service is busy (queue full): %s", error)
    elif status_code == 503:
        log.warning("stream-browser service is shutting down: %s", error)
    else:
        log.warning("stream-browser service answered %s: %s", status_code, error)


def browse_and_search(
    query: str,
    *,
    action: str = "auto",
    url: str | None = None,
    broadcasting: bool | None = None,
    engine: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    service_url: str | None = None,
    token: str | None = None,
) -> dict[str, Any] | None:
    """Search, read or play through the service: the `ToolExecutionResult` as a dict, or
    `None` when every provider failed or the service could not answer (reason logged).
    `engine`: the tool declaration's optional field, passed on as the brain gave it."""
    answer = browse(
        query,
        action=action,
        url=url,
        broadcasting=broadcasting,
        engine=engine,
        timeout=timeout,
        service_url=service_url,
        token=token,
    )
    if answer is None:
        return None
    result = answer.get("result")
    if not isinstance(result, dict):
        kinds = ", ".join(
            f"{hop.get('provider')}: {hop.get('failure_kind')}"
            for hop in answer.get("chain") or []
            if isinstance(hop, dict)
        )
        log.warning("every provider failed (%s)", kinds or "no provider for this action")
        return None
    return result


def _control(action: str, broadcasting: bool | None, **kw: Any) -> dict[str, Any] | None:
    return browse_and_search("", action=action, broadcasting=broadcasting, **kw)


def pause(*, broadcasting: bool | None = None, **kw: Any) -> dict[str, Any] | None:
    """Pause the video on the stream (`timeout`, `service_url`, `token` as above)."""
    return _control("pause", broadcasting, **kw)


def resume(*, broadcasting: bool | None = None, **kw: Any) -> dict[str, Any] | None:
    """Resume the paused video where it stopped."""
    return _control("resume", broadcasting, **kw)


def stop(*, broadcasting: bool | None = None, **kw: Any) -> dict[str, Any] | None:
    """Stop the video and leave a neutral page."""
    return _control("stop", broadcasting, **kw)


def status(*, broadcasting: bool | None = None, **kw: Any) -> dict[str, Any] | None:
    """What is playing on the stream."""
    return _control("status", broadcasting, **kw)


USAGE = """usage: python3 client.py QUERY [ACTION [URL]]

Ask a running `stream-browser serve` and print its answer as JSON
({"result": ..., "chain": [...]}); exit 0 with a result, 1 without one.

  QUERY   what to look for ("" for the playback controls)
  ACTION  auto (default), search, read, play, pause, resume, stop, status
  URL     the page to read (action read)

Environment: SB_SERVICE_URL (http://127.0.0.1:8765 or unix:///path/sock; `off`: none),
SB_SERVICE_TOKEN (else the token file $SB_STATE_DIR/service-token, default
~/.cache/stream-browser/service-token), SB_SERVICE_HOST / SB_SERVICE_PORT / SB_SERVICE_SOCKET.
"""


def _main(argv: list[str]) -> int:
    """`python3 client.py QUERY [ACTION [URL]]`: print the answer as JSON (exit 1 if None)."""
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0
    if argv and argv[0].startswith("-") and argv[0] != "-":
        print(f"client.py: unknown option {argv[0]}\n\n{USAGE}", end="", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    query = argv[0] if argv else ""
    action = argv[1] if len(argv) > 1 else "auto"
    url = argv[2] if len(argv) > 2 else None
    answer = browse(query, action=action, url=url)
    print(json.dumps(answer, ensure_ascii=False))
    return 0 if answer is not None and answer.get("result") is not None else 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
