"""Who may call the service: the bearer token, browser-made requests refused (DNS rebinding,
CSRF), the `Host` check, and the body checks of `_body`, as ASGI middleware in front of every
face.

A browser marks what a page makes it send: `Origin` on every cross-origin request (and on any
POST), `Sec-Fetch-Site` on every request of a recent browser (`none` only for what the user
typed or bookmarked, which carries no token). Node's `fetch` (undici), under every Node MCP
host, always sends `Sec-Fetch-Mode: cors` and neither of the others, so `Sec-Fetch-Mode` alone
is not a browser. A page reached through DNS rebinding names its own host in `Host`.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass, field
from typing import Any

import structlog
from fastapi.responses import JSONResponse

from ._body import BODY_FIX, MAX_BODY_BYTES, body_problem, read_bounded
from ._core import Service
from ._models import error_body

log = structlog.get_logger("search.service")

UNAUTHENTICATED_PATHS = frozenset({"/healthz"})
OAUTH_DISCOVERY = "/.well-known/"
TOKEN_FIX = (
    "send `Authorization: Bearer TOKEN` with SB_SERVICE_TOKEN or the token file "
    "(`$SB_STATE_DIR/service-token`, default ~/.cache/stream-browser/service-token); "
    "this service does not do OAuth"
)


@dataclass(frozen=True)
class Access:
    """Who may call: the token, and the `Host` values that name the bound address."""

    token: str
    hosts: frozenset[str] | None  # None: any Host (a Unix socket, or a wildcard bind)

    def host_ok(self, host: str) -> bool:
        return self.hosts is None or host.lower() in self.hosts

    def token_ok(self, authorization: str) -> bool:
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(given.strip().encode(), self.token.encode())


@dataclass(frozen=True)
class Refusal:
    """A request the guard answers itself: status, what happened, how to fix it."""

    status: int
    message: str
    fix: str
    headers: dict[str, str] = field(default_factory=dict)


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """`Host` values naming the bound address; loopback binds also accept `localhost`."""
    if host in ("0.0.0.0", "::", ""):
        return None
    names = {host.lower(), f"[{host}]" if ":" in host else host.lower()}
    if is_loopback(host):
        names |= {"localhost", "127.0.0.1", "[::1]"}
    return frozenset({*names, *(f"{name}:{port}" for name in names)})


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def browser_mark(headers: dict[bytes, bytes]) -> str | None:
    """The header that shows a browser sent this on a page's behalf, or None."""
    if b"origin" in headers:
        return "Origin"
    site = headers.get(b"sec-fetch-site")
    if site is not None and site.strip().lower() != b"none":
        return f"Sec-Fetch-Site: {site.decode('latin-1')[:40]}"
    return None


class Guard:
    """ASGI middleware in front of everything, mounted apps (`/mcp`) included.

    Order: browser-made requests (`Origin`, `Sec-Fetch-Site`) and foreign `Host` values → 403;
    OAuth discovery (`/.well-known/...`) → 404; no or wrong bearer token → 401 (`/healthz`
    excepted); draining → 503; body over the limit → 413; a body that is not JSON, nests too
    deep or is not valid Unicode → 400. Every refusal has the one error body.
    """

    def __init__(self, app: Any, *, access: Access, service: Service, console: Any = None) -> None:
        self.app = app
        self.access = access
        self.service = service
        self.console = console  # the ASGI app of `/console`, which checks its own requests

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {key.lower(): value for key, value in scope.get("headers", [])}
        if self.console is not None and _is_console(scope):
            await self._to_console(scope, receive, send, headers)
            return
        refusal = self._refusal(scope, headers)
        if refusal is None and scope["type"] == "http":
            await self._forward(scope, receive, send)
            return
        if refusal is None:
            await self.app(scope, receive, send)
            return
        await _refuse(scope, send, refusal)

    async def _to_console(
        self, scope: Any, receive: Any, send: Any, headers: dict[bytes, bytes]
    ) -> None:
        """`/console` is a page for a person's browser: it makes its own checks of the
        browser's marks (same origin only), the sign-in and the session; here only the
        `Host` (DNS rebinding) is checked and a crash is one JSON 500."""
        if scope["type"] != "http":
            await _refuse(scope, send, Refusal(404, "the console has no WebSocket", "use HTTP"))
            return
        if not self._host_ok(headers):
            await _refuse(scope, send, _FOREIGN_HOST)
            return
        await _guarded(self.console, scope, receive, send)

    def _host_ok(self, headers: dict[bytes, bytes]) -> bool:
        return self.access.host_ok(headers.get(b"host", b"").decode("latin-1"))

    def _refusal(self, scope: Any, headers: dict[bytes, bytes]) -> Refusal | None:
        mark = browser_mark(headers)
        if mark is not None:
            return Refusal(
                403,
                f"requests from web pages are refused (the request carries {mark})",
                "call from a program (the stdlib client, an MCP host, curl), not a web page",
            )
        if not self._host_ok(headers):
            return _FOREIGN_HOST
        path = scope.get("path", "")
        if path.startswith(OAUTH_DISCOVERY):
            return Refusal(
                404, "this service does not do OAuth: no authorization server", TOKEN_FIX
            )
        if path not in UNAUTHENTICATED_PATHS:
            refusal = self._token_refusal(headers)
            if refusal is not None:
                return refusal
        if self.service.draining and path not in UNAUTHENTICATED_PATHS:
            return Refusal(
                503, "the service is shutting down", "retry once it is back", {"retry-after": "5"}
            )
        length = headers.get(b"content-length", b"0").decode("latin-1")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            return _too_large()
        return None

    def _token_refusal(self, headers: dict[bytes, bytes]) -> Refusal | None:
        authorization = headers.get(b"authorization", b"").decode("latin-1")
        if self.access.token_ok(authorization):
            return None
        said = "wrong" if authorization else "missing"
        # RFC 6750's challenge with an error: no `resource_metadata`, nothing to discover
        challenge = f'Bearer error="invalid_token", error_description="the token is {said}"'
        return Refusal(
            401, f"the bearer token is {said}", TOKEN_FIX, {"www-authenticate": challenge}
        )

    async def _forward(self, scope: Any, receive: Any, send: Any) -> None:
        """Read the body here (bounded), check it, then hand it to the app in one piece."""
        body = await read_bounded(receive)
        if body is None:
            await _refuse(scope, send, _too_large())
            return
        problem = body_problem(body) if body.strip() else None
        if problem is not None:
            await _refuse(scope, send, Refusal(400, problem, BODY_FIX))
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return dict(await receive())  # what comes next: a disconnect
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await _guarded(self.app, scope, replay, send)


async def _guarded(app: Any, scope: Any, receive: Any, send: Any) -> None:
    """Run the app; a crash is one JSON 500 and one structured log event, never uvicorn's
    plain-text traceback."""
    started = False

    async def tracked(message: dict[str, Any]) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, receive, tracked)
    except Exception:
        log.exception("service.crashed", path=scope.get("path"))
        if not started:
            fix = "this is a bug: the service's log has the details"
            await send_json(send, 500, error_body(500, "the service failed", fix))


_FOREIGN_HOST = Refusal(
    403,
    "the Host header does not name this service's address",
    "connect to the address the service listens on (127.0.0.1 or localhost)",
)


def _is_console(scope: Any) -> bool:
    path = str(scope.get("path", ""))
    return path == "/console" or path.startswith("/console/")


def _too_large() -> Refusal:
    return Refusal(
        413,
        f"the body must be at most {MAX_BODY_BYTES} bytes, with a Content-Length or chunked",
        "send a shorter query (2000 characters at most) or URL",
    )


async def _refuse(scope: Any, send: Any, refusal: Refusal) -> None:
    log.info(
        "service.refused", status=refusal.status, path=scope.get("path"), reason=refusal.message
    )
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    payload = error_body(refusal.status, refusal.message, refusal.fix)
    await send_json(send, refusal.status, payload, refusal.headers)


async def send_json(
    send: Any, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None
) -> None:
    body = JSONResponse(payload).body
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
