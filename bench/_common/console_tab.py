"""A person's open console tab, for `make bench BENCH_ARGS=--console` and `make soak
SOAK_ARGS=--console`: it signs in as the page's form does (the token and the key its script
makes), then, as the page's script does (the key in every request's `X-Console-Key`), asks
for the state every second and a live frame every 0.6 s, and opens each new call's detail
and screenshot. Loopback only; it stops when told, or after `max_s` on its own."""

from __future__ import annotations

import http.client
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

STATE_EVERY_S = 1.0
FRAME_EVERY_S = 0.6


@dataclass
class TabCounts:
    states: int = 0
    frames: int = 0
    details: int = 0
    errors: list[str] = field(default_factory=list)


class ConsoleTab:
    """Polls `/console` of the service at `url` from a thread, like an open browser tab."""

    def __init__(self, url: str, token: str, *, max_s: float = 4 * 3600) -> None:
        parts = urlsplit(url)
        self.host = parts.netloc
        self.origin = f"http://{self.host}"
        self.token = token
        self.max_s = max_s
        self.counts = TabCounts()
        self._cookie = ""
        self._key = secrets.token_hex(32)  # what the sign-in page's script makes
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="console-tab", daemon=True)

    def start(self) -> ConsoleTab:
        self._sign_in()
        self._thread.start()
        return self

    def stop(self) -> TabCounts:
        self._stop.set()
        self._thread.join(10)
        return self.counts

    def _request(
        self, method: str, path: str, body: bytes | None = None, **headers: str
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(self.host, timeout=10)
        try:
            sent = {"Host": self.host, "Sec-Fetch-Site": "same-origin", **headers}
            if self._cookie:
                sent["Cookie"] = self._cookie
                sent["X-Console-Key"] = self._key
            conn.request(method, path, body=body, headers=sent)
            answer = conn.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
        finally:
            conn.close()

    def _sign_in(self) -> None:
        body = f"token={quote(self.token)}&key={self._key}".encode()
        status, headers, _ = self._request(
            "POST",
            "/console/sign-in",
            body,
            Origin=self.origin,
            **{"Content-Type": "application/x-www-form-urlencoded"},
        )
        if status != 303 or "set-cookie" not in headers:
            raise RuntimeError(f"the console refused the sign-in ({status})")
        self._cookie = headers["set-cookie"].split(";", 1)[0]

    def _run(self) -> None:
        until = time.monotonic() + self.max_s
        next_state = next_frame = time.monotonic()
        seen: set[int] = set()
        while not self._stop.is_set() and time.monotonic() < until:
            now = time.monotonic()
            try:
                if now >= next_state:
                    next_state = now + STATE_EVERY_S
                    self._state(seen)
                if now >= next_frame:
                    next_frame = now + FRAME_EVERY_S
                    self._request("GET", "/console/api/frame")
                    self.counts.frames += 1
            except (OSError, http.client.HTTPException, ValueError) as exc:
                self.counts.errors.append(f"{type(exc).__name__}: {str(exc)[:100]}")
            self._stop.wait(max(0.0, min(next_state, next_frame) - time.monotonic()))

    def _state(self, seen: set[int]) -> None:
        status, _, body = self._request("GET", "/console/api/state")
        if status != 200:
            raise ValueError(f"state answered {status}")
        self.counts.states += 1
        state: dict[str, Any] = json.loads(body)
        for call in state["calls"][:3]:
            if call["id"] in seen or call["running"]:
                continue
            seen.add(call["id"])
            self._request("GET", f"/console/api/calls/{call['id']}")
            if call["shot"]:
                self._request("GET", f"/console/api/calls/{call['id']}/shot")
            self.counts.details += 1
