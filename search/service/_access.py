"""Who may call the service: the bearer token, browser-made requests refused (DNS rebinding,
CSRF), the `Host` check and the body limit, as ASGI middleware in front of every face."""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import Any

import structlog
from fastapi.responses import JSONResponse

from ._core import Service

log = structlog.get_logger("search.service")

MAX_BODY_BYTES = 64 * 1024
UNAUTHENTICATED_PATHS = frozenset({"/healthz"})
# What a browser adds to every request it makes on a page's behalf (a non-browser client
# such as urllib, curl or httpx sends none of them).
_BROWSER_HEADERS = (b"origin", b"sec-fetch-site", b"sec-fetch-mode")


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


class Guard:
    """ASGI middleware in front of everything, mounted apps (`/mcp`) included.

    Order: browser-made requests (`Origin`, `Sec-Fetch-*`) and foreign `Host` values → 403;
    no or wrong bearer token → 401 (`/healthz` excepted); draining → 503; body over the limit
    → 413.
    """

    def __init__(self, app: Any, *, access: Access, service: Service) -> None:
        self.app = app
        self.access = access
        self.service = service

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {key.lower(): value for key, value in scope.get("headers", [])}
        refusal = self._refusal(scope, headers)
        if refusal is None:
            await self._forward(scope, receive, send, headers)
            return
        status, message, extra = refusal
        log.info("service.refused", status=status, path=scope.get("path"), reason=message)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await _send_json(send, status, {"error": message}, extra)

    def _refusal(
        self, scope: Any, headers: dict[bytes, bytes]
    ) -> tuple[int, str, dict[str, str]] | None:
        if any(name in headers for name in _BROWSER_HEADERS):
            return 403, "requests from web pages are refused (Origin/Sec-Fetch header)", {}
        if not self.access.host_ok(headers.get(b"host", b"").decode("latin-1")):
            return 403, "the Host header does not name this service's address", {}
        path = scope.get("path", "")
        if path not in UNAUTHENTICATED_PATHS:
            authorization = headers.get(b"authorization", b"").decode("latin-1")
            if not self.access.token_ok(authorization):
                return (
                    401,
                    "missing or wrong bearer token: send `Authorization: Bearer TOKEN` with "
                    "SB_SERVICE_TOKEN or the token file in the service's state directory",
                    {"www-authenticate": "Bearer"},
                )
        if self.service.draining and path not in UNAUTHENTICATED_PATHS:
            return 503, "the service is shutting down", {"retry-after": "5"}
        length = headers.get(b"content-length", b"0").decode("latin-1")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            return 413, f"the body must be at most {MAX_BODY_BYTES} bytes with a length", {}
        return None

    async def _forward(
        self, scope: Any, receive: Any, send: Any, headers: dict[bytes, bytes]
    ) -> None:
        if b"transfer-encoding" not in headers:
            await self.app(scope, receive, send)
            return
        body = await _read_bounded(receive)  # chunked: read it here, within the limit
        if body is None:
            await _send_json(send, 413, {"error": f"the body exceeds {MAX_BODY_BYTES} bytes"})
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return dict(await receive())
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _read_bounded(receive: Any) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _send_json(
    send: Any, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None
) -> None:
    body = JSONResponse(payload).body
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
