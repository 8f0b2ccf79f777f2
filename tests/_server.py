"""A local HTTP server for tests: static files from tests/pages plus per-test routes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PAGES = Path(__file__).parent / "pages"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".webm": "video/webm",
    ".json": "application/json",
    ".pdf": "application/pdf",
    ".png": "image/png",
    ".js": "text/javascript",
    ".css": "text/css",
}


@dataclass
class Reply:
    """A canned reply: status, headers, body, an optional delay before it is sent, and an
    optional time over which the body trickles out (a slow download)."""

    body: bytes | str = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    content_type: str = "text/html; charset=utf-8"
    trickle_s: float = 0.0


Route = Reply | Callable[[BaseHTTPRequestHandler], Reply]


class LocalServer:
    """ThreadingHTTPServer on 127.0.0.1:0 (or another loopback `host`); `route(path, reply)`
    overrides a path."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner._serve(self)

            do_POST = do_GET

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.prefix = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return self.prefix + path

    def route(self, path: str, reply: Route) -> str:
        self.routes[path] = reply
        return self.url(path)

    def reset(self) -> None:
        self.routes.clear()
        self.requests.clear()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        self.requests.append(handler.path)
        path = handler.path.split("?", 1)[0]
        route = self.routes.get(handler.path) or self.routes.get(path)
        reply = route(handler) if callable(route) else route
        if reply is None:
            reply = _static(path)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        body = reply.body.encode() if isinstance(reply.body, str) else reply.body
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", reply.content_type)
            handler.send_header("Content-Length", str(len(body)))
            for key, value in reply.headers.items():
                handler.send_header(key, value)
            handler.end_headers()
            _write(handler, body, reply.trickle_s)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _write(handler: BaseHTTPRequestHandler, body: bytes, trickle_s: float) -> None:
    """All of `body` at once, or in 20 pieces spread over `trickle_s` seconds."""
    if not trickle_s:
        handler.wfile.write(body)
        return
    size = max(1, -(-len(body) // 20))
    for start in range(0, len(body), size):
        handler.wfile.write(body[start : start + size])
        handler.wfile.flush()
        time.sleep(trickle_s / 20)


def _static(path: str) -> Reply:
    file = (PAGES / path.lstrip("/")).resolve()
    if PAGES.resolve() not in file.parents or not file.is_file():
        return Reply(b"<h1>404 Not Found</h1>", status=404)
    return Reply(
        file.read_bytes(), content_type=_TYPES.get(file.suffix, "application/octet-stream")
    )
