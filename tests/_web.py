"""Routes real Google/YouTube addresses to saved pages inside Chromium (the URL bar shows the
real address). Anything not routed and not on 127.0.0.1 is aborted: no test reaches the
internet."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_text(relative: str) -> str:
    data = (FIXTURES / relative).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


@dataclass
class Page:
    body: str | bytes
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


Handler = Page | Callable[[Any], Page]


@dataclass
class FakeWeb:
    """Prefix -> page. Longest prefix wins; requests are recorded (`seen`: their URLs;
    `methods`: (method, URL) pairs)."""

    routes: dict[str, Handler] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)
    methods: list[tuple[str, str]] = field(default_factory=list)

    def add(self, prefix: str, handler: Handler) -> None:
        self.routes[prefix] = handler

    async def hook(self, page: Any) -> None:
        await page.route("**/*", self._handle)

    async def _handle(self, route: Any) -> None:
        url = route.request.url
        self.seen.append(url)
        self.methods.append((route.request.method, url))
        match = max((p for p in self.routes if url.startswith(p)), key=len, default=None)
        if match is None:
            if url.startswith(("http://127.0.0.1", "http://localhost")):
                await route.fallback()  # the driver's internal-address guard decides
            else:
                await route.abort()
            return
        handler = self.routes[match]
        reply = handler(route.request) if callable(handler) else handler
        await route.fulfill(
            status=reply.status,
            body=reply.body,
            content_type=reply.content_type,
            headers=reply.headers,
        )
