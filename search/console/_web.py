"""`/console`: the page, its script and style, the sign-in, and the data endpoints, behind
checks of their own (the service's `Guard` hands every `/console` path here once the `Host`
header names the service).

Guards against a web page reading or driving the console: a request another site made
(`Sec-Fetch-Site` other than `same-origin` or `none`, an `Origin` that is not the service's
own) is refused, a POST must carry the service's own `Origin`, no CORS header is ever sent,
and every answer carries a strict Content-Security-Policy, `frame-ancestors 'none'` and
`Cross-Origin-Resource-Policy: same-origin`. The sign-in takes the token in a POST body and
answers with a session cookie (HttpOnly, SameSite=Strict, Path=/console) that is a random
session id, never the token; the token never appears in a URL, a page or a log line.

Guards against a server on another port of the same host using the session: browsers send
the cookie to every port, so the cookie alone opens nothing. The sign-in page's script makes
a key for the session, keeps it in the console origin's storage (which other ports' pages
cannot read) and sends it with the token; the console's script sends it back on every
request as `X-Console-Key`, and only cookie and key together are a session.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import itertools
import re
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

import structlog
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..service._access import TOKEN_FIX, Access
from ..service._models import error_body

log = structlog.get_logger("search.console")

PREFIX = "/console"
COOKIE = "sb_console"
KEY_HEADER = "x-console-key"
_KEY = re.compile(r"[0-9a-f]{64}")  # what the sign-in page's script makes: 32 random bytes
SESSION_S = 12 * 3600
SESSIONS_KEPT = 16
SIGN_IN_MAX_BYTES = 4096
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
_STATIC = {
    "console.js": "text/javascript",
    "wheel.js": "text/javascript",
    "signin.js": "text/javascript",
    "console.css": "text/css",
}
_SIGN_IN_FIX = (
    "paste the service token: SB_SERVICE_TOKEN, or the token file "
    "(`$SB_STATE_DIR/service-token`, default ~/.cache/stream-browser/service-token)"
)


def _same(ours: str, given: str) -> bool:
    """A constant-time comparison that takes any text a request can carry."""
    return hmac.compare_digest(ours.encode(), given.encode("utf-8", "replace"))


def is_console_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def _asset(name: str) -> bytes:
    return resources.files("search.console").joinpath("static", name).read_bytes()


class Sessions:
    """Signed-in consoles: random ids (the cookie), each with the key its page made and an
    expiry, the newest `SESSIONS_KEPT`."""

    def __init__(self) -> None:
        self._open: OrderedDict[str, tuple[float, str, int]] = OrderedDict()
        self._numbers = itertools.count(1)

    def open(self, key: str) -> str:
        sid = secrets.token_urlsafe(32)
        self._open[sid] = (time.monotonic() + SESSION_S, key, next(self._numbers))
        while len(self._open) > SESSIONS_KEPT:
            self._open.popitem(last=False)
        return sid

    def _find(self, sid: str | None) -> tuple[float, str, int] | None:
        if not sid:
            return None
        found = next((v for s, v in self._open.items() if _same(s, sid)), None)
        return found if found is not None and found[0] > time.monotonic() else None

    def known(self, sid: str | None) -> bool:
        """The cookie names a live session (enough for the page, which holds no data)."""
        return self._find(sid) is not None

    def valid(self, sid: str | None, key: str | None) -> bool:
        """The cookie names a live session and `key` is the one its page made."""
        found = self._find(sid)
        return found is not None and bool(key) and _same(found[1], key or "")

    def close(self, sid: str | None) -> None:
        if sid:
            self._open.pop(sid, None)

    def person(self, sid: str | None, key: str | None) -> Person | None:
        """The signed-in console behind a valid cookie and key: an opaque id (never the
        cookie) and its number, in sign-in order."""
        found = self._find(sid)
        if found is None or not key or not _same(found[1], key) or sid is None:
            return None
        owner = hashlib.sha256(sid.encode()).hexdigest()[:16]
        return Person(owner, f"console {found[2]}")


@dataclass(frozen=True)
class Person:
    """A signed-in console session as the screen's hold knows it."""

    owner: str
    label: str


class Gate:
    """Who may use the console: same-origin requests with a session cookie or the bearer
    token; the sign-in and the static files need no session."""

    def __init__(self, access: Access, sessions: Sessions) -> None:
        self.access = access
        self.sessions = sessions

    def cross_site(self, request: Request, *, post: bool) -> str | None:
        """What shows another site made this request, or None."""
        site = request.headers.get("sec-fetch-site")
        if site is not None and site.strip().lower() not in ("same-origin", "none"):
            return f"Sec-Fetch-Site: {site[:40]}"
        origin = request.headers.get("origin")
        own = f"http://{request.headers.get('host', '')}"
        if origin is not None and origin != own:
            return f"Origin: {origin[:80]}"
        if post and origin is None and not self.bearer(request):
            return "a POST without the service's own Origin"
        return None

    def bearer(self, request: Request) -> bool:
        return self.access.token_ok(request.headers.get("authorization", ""))

    def signed_in(self, request: Request) -> bool:
        """The bearer token, or the session cookie with its page's key."""
        cookie, key = request.cookies.get(COOKIE), request.headers.get(KEY_HEADER)
        return self.bearer(request) or self.sessions.valid(cookie, key)

    def person(self, request: Request) -> Person | None:
        """The signed-in console session (cookie and key; the bearer token is no person)."""
        return self.sessions.person(request.cookies.get(COOKIE), request.headers.get(KEY_HEADER))

    def page_session(self, request: Request) -> bool:
        """The cookie names a live session: enough to be handed the page (no data in it)."""
        return self.sessions.known(request.cookies.get(COOKIE))

    def not_signed_in(self, request: Request) -> JSONResponse:
        """401, saying whether the key was missing from a known session's cookie."""
        if self.page_session(request):
            return refused(request, 401, _COOKIE_ALONE, _COOKIE_ALONE_FIX)
        return refused(request, 401, "not signed in", " or ".join(NOT_SIGNED_IN))

    def token_ok(self, given: str) -> bool:
        return hmac.compare_digest(given.strip().encode(), self.access.token.encode())


def refused(request: Request, status: int, message: str, fix: str) -> JSONResponse:
    log.info("console.refused", status=status, path=request.url.path, reason=message)
    return JSONResponse(error_body(status, message, fix), status_code=status)


def sign_in_page(message: str = "", status: int = 401) -> Response:
    """The sign-in form (no script); `message` is one of our own fixed sentences."""
    page = _asset("signin.html").decode("utf-8").replace("{message}", html.escape(message))
    return Response(page, status_code=status, media_type="text/html; charset=utf-8")


async def _bounded_body(request: Request) -> bytes | None:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > SIGN_IN_MAX_BYTES:
            return None
    return body


def web_app(gate: Gate, api: list[Route], page: Any) -> Starlette:
    """The console's routes: the page, its assets, sign-in and sign-out, then `api`."""

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        problem = gate.cross_site(request, post=False)
        if problem is not None:
            return refused(request, 403, f"cross-site request refused ({problem})", _SAME)
        if name not in _STATIC:
            return refused(request, 404, "no such file", "see /console")
        return Response(_asset(name), media_type=_STATIC[name])

    async def sign_in(request: Request) -> Response:
        problem = gate.cross_site(request, post=True)
        if problem is not None:
            return refused(request, 403, f"cross-site sign-in refused ({problem})", _SAME)
        body = await _bounded_body(request)
        form = parse_qs((body or b"").decode("utf-8", "replace"))
        given, key = form.get("token", [""])[0], form.get("key", [""])[0]
        if body is None or not given or not gate.token_ok(given):
            log.info("console.sign_in_refused", reason="missing" if not given else "wrong")
            return sign_in_page("That is not the service's token. " + _SIGN_IN_FIX + ".")
        if not _KEY.fullmatch(key):
            log.info("console.sign_in_refused", reason="no key")
            return sign_in_page(_NO_KEY, status=400)
        sid = gate.sessions.open(key)
        log.info("console.signed_in")
        answer = Response(status_code=303, headers={"location": PREFIX + "#signed-in"})
        answer.set_cookie(
            COOKIE, sid, max_age=SESSION_S, path=PREFIX, httponly=True, samesite="strict"
        )
        return answer

    async def sign_out(request: Request) -> Response:
        problem = gate.cross_site(request, post=True)
        if problem is not None:
            return refused(request, 403, f"cross-site request refused ({problem})", _SAME)
        if gate.signed_in(request):  # the cookie alone may not end the session
            gate.sessions.close(request.cookies.get(COOKIE))
            log.info("console.signed_out")
        answer = Response(status_code=303, headers={"location": PREFIX})
        answer.delete_cookie(COOKIE, path=PREFIX, httponly=True, samesite="strict")
        return answer

    async def sign_in_form(request: Request) -> Response:
        problem = gate.cross_site(request, post=False)
        if problem is not None:
            return refused(request, 403, f"cross-site request refused ({problem})", _SAME)
        return sign_in_page(status=200)

    routes = [
        Route(PREFIX, page, methods=["GET"]),
        Route(PREFIX + "/sign-in", sign_in_form, methods=["GET"]),
        Route(PREFIX + "/static/{name}", static, methods=["GET"]),
        Route(PREFIX + "/sign-in", sign_in, methods=["POST"]),
        Route(PREFIX + "/sign-out", sign_out, methods=["POST"]),
        *api,
    ]
    return Starlette(routes=routes)


_SAME = "open the console from its own address (http://127.0.0.1:PORT/console), not from a page"
NOT_SIGNED_IN = ("sign in at /console with the service token", TOKEN_FIX)
_COOKIE_ALONE = (
    "the session cookie alone is not enough: the console's own page sends its key "
    "(X-Console-Key) with it"
)
_COOKIE_ALONE_FIX = (
    "use the console from its own page (sign in again at /console/sign-in if this tab lost "
    "its key); browsers send the cookie to every port of this host, so a cookie another "
    "server received opens nothing"
)
_NO_KEY = (
    "The sign-in came without the key the console's page makes for the session: sign in "
    "from /console with JavaScript on."
)
