"""Serve saved pages to a bench Chromium the way the web would, and measure what serving costs.

A Python `route.fulfill` of a 1.7 MB page adds about 0.5 s per navigation (IPC), which would
swamp the differences the bench measures. So pages come from a local HTTPS server instead, and
Chromium is started with resolver rules that send www.google.com / www.youtube.com to it (the
address bar keeps the real URL); every other host fails at once, as if it were not recorded.
"""

from __future__ import annotations

import gzip
import json
import shutil
import socket
import ssl
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

HTML = "text/html; charset=utf-8"
MAPPED_HOSTS = ("www.google.com", "www.youtube.com")
TEST_VIDEO = Path(__file__).resolve().parents[2] / "tests" / "pages" / "test-video.webm"
VIDEO_IDS = ("soakVideo01", "soakVideo02", "soakVideo03")
_WATCH = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title} - YouTube</title>
<script>var ytInitialPlayerResponse = {player};</script></head>
<body><div id="movie_player" class="html5-video-player">
<video src="/test-video.webm" preload="auto" loop></video></div><h1>{title}</h1></body></html>
"""


@dataclass
class Served:
    """One canned reply. `delay_s` holds the reply back (a slow or hanging server);
    `endless` sends the body again and again, with no length, until the client goes."""

    body: bytes
    content_type: str = HTML
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    endless: bool = False


Handler = Served | Callable[[str], Served]


@dataclass(frozen=True)
class Hit:
    """One request the server answered: path, bytes sent, seconds spent answering."""

    path: str
    status: int
    size: int
    seconds: float


def read_page(path: Path | str) -> bytes:
    """The bytes of a saved page (`.gz` files are decompressed)."""
    data = Path(path).read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def make_cert(folder: Path) -> tuple[Path, Path]:
    """A throw-away self-signed certificate for the mapped hosts (needs `openssl`)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("openssl not found: install it with `apt-get install openssl`")
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    names = ",".join(f"DNS:{host}" for host in MAPPED_HOSTS) + ",IP:127.0.0.1"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=www.google.com",
            "-addext",
            f"subjectAltName={names}",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def get_request(self) -> tuple[Any, Any]:
        # TCP_NODELAY, as web servers set it: http.server writes the headers and the body
        # separately, and with Nagle on, the body waited for the ACK of the headers, which the
        # client's kernel may delay by 40 ms (measured: 27 of 30 small fetches of a Chromium
        # without the egress guard took 40-50 ms). That stall, not the guard, then decided the
        # egress guard's ratio.
        sock, address = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a browser that went away mid-reply (killed, navigated off) is expected here


class BenchServer:
    """HTTPS on 127.0.0.1: path prefix -> reply; unknown paths get a tiny 404 at once."""

    def __init__(self, cert_dir: Path) -> None:
        self.routes: dict[str, Handler] = {}
        self.hits: list[Hit] = []
        self.seen: list[str] = []  # every request path, as it arrives
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), self._handler_class())
        cert, key = make_cert(cert_dir)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self.port = int(self._httpd.server_address[1])
        self.origin = f"https://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, daemon=True, kwargs={"poll_interval": 0.05}
        )
        self._thread.start()

    def add(self, prefix: str, handler: Handler) -> str:
        """Serve `handler` for every path starting with `prefix`; returns the local URL."""
        self.routes[prefix] = handler
        return self.origin + prefix

    def chrome_args(self, hosts: tuple[str, ...] = MAPPED_HOSTS) -> tuple[str, ...]:
        """Flags for the bench Chromium: mapped hosts here, every other name unresolvable."""
        rules = [f"MAP {host} 127.0.0.1:{self.port}" for host in hosts]
        rules += ["MAP * ~NOTFOUND", "EXCLUDE 127.0.0.1"]
        return (f"--host-resolver-rules={', '.join(rules)}", "--ignore-certificate-errors")

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def serving_ms(self, prefix: str) -> tuple[int, float, float]:
        """(requests, median ms, max ms) the server spent answering paths under `prefix`."""
        with self._lock:
            times = [h.seconds * 1000 for h in self.hits if h.path.startswith(prefix)]
        if not times:
            return 0, 0.0, 0.0
        return len(times), statistics.median(times), max(times)

    def clear_hits(self) -> None:
        with self._lock:
            self.hits.clear()
            self.seen.clear()

    def wait_for(self, prefix: str, timeout: float = 10.0) -> bool:
        """Block until a request for a path under `prefix` has arrived."""
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            with self._lock:
                if any(path.startswith(prefix) for path in self.seen):
                    return True
            time.sleep(0.02)
        return False

    # -- the request handler ----------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner._answer(self)

            do_POST = do_GET
            do_HEAD = do_GET

        return Handler

    def _match(self, path: str) -> Served:
        prefix = max((p for p in self.routes if path.startswith(p)), key=len, default=None)
        if prefix is None:
            return Served(b"not recorded", content_type="text/plain", status=404)
        handler = self.routes[prefix]
        return handler(path) if callable(handler) else handler

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        started = time.perf_counter()
        with self._lock:
            self.seen.append(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        if length:  # a beacon's body left unread would be parsed as the next request (400)
            request.rfile.read(length)
        reply = self._match(request.path)
        if reply.delay_s and self._stop.wait(reply.delay_s):
            return
        try:
            request.send_response(reply.status)
            request.send_header("Content-Type", reply.content_type)
            if reply.endless:
                request.send_header("Connection", "close")
            else:
                request.send_header("Content-Length", str(len(reply.body)))
            request.send_header("Cache-Control", "no-store")
            for key, value in reply.headers.items():
                request.send_header(key, value)
            request.end_headers()
            if request.command != "HEAD":
                request.wfile.write(reply.body)
                while reply.endless and not self._stop.is_set():
                    request.wfile.write(reply.body)
            request.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            return
        seconds = time.perf_counter() - started - reply.delay_s
        with self._lock:
            self.hits.append(Hit(request.path, reply.status, len(reply.body), seconds))


# -- a minimal YouTube: a results page and watch pages with a real (local) video -------------


def _video_renderer(video_id: str, n: int) -> dict[str, Any]:
    return {
        "videoRenderer": {
            "videoId": video_id,
            "title": {"runs": [{"text": f"Test Pattern Tone {n}"}]},
            "ownerText": {"runs": [{"text": "Local Test Channel"}]},
            "lengthText": {"simpleText": "0:30"},
        }
    }


def youtube_results_page(video_ids: tuple[str, ...] = VIDEO_IDS) -> bytes:
    """A results page shaped like YouTube's: `ytInitialData` with `videoRenderer` items."""
    items = [_video_renderer(vid, n) for n, vid in enumerate(video_ids, 1)]
    data = {
        "contents": {
            "twoColumnSearchResultsRenderer": {
                "primaryContents": {
                    "sectionListRenderer": {
                        "contents": [{"itemSectionRenderer": {"contents": items}}]
                    }
                }
            }
        }
    }
    return (
        f"<!DOCTYPE html><html><head><title>results - YouTube</title></head><body>"
        f"<script>var ytInitialData = {json.dumps(data)};</script></body></html>"
    ).encode()


def watch_page(path: str) -> Served:
    """The watch page for `/watch?v=ID`, playing the local test video."""
    video_id = (parse_qs(urlsplit(path).query).get("v") or ["unknownVid0"])[0][:11]
    title = f"Test Pattern Tone {video_id}"
    player = json.dumps(
        {
            "videoDetails": {
                "videoId": video_id,
                "title": title,
                "lengthSeconds": "30",
                "author": "Local Test Channel",
                "isLiveContent": False,
            }
        }
    )
    return Served(_WATCH.format(title=title, player=player).encode())


def add_youtube(server: BenchServer, video: Path = TEST_VIDEO) -> None:
    """Serve /results, /watch and the test video (for www.youtube.com, mapped here)."""
    if not video.is_file():
        raise RuntimeError(f"{video} is missing: it ships with the tests (tests/pages)")
    server.add("/results", Served(youtube_results_page()))
    server.add("/watch", watch_page)
    server.add("/test-video.webm", Served(video.read_bytes(), content_type="video/webm"))
