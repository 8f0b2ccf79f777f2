"""The bench's two workloads (a Google search on the heavy results page, a read of the light
article) on its stage, and the bare-Playwright floor row: shared by `bench.warm` and
`bench.egress` (which imported them from each other before)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote_plus

from bench._common.serve import Served, read_page
from bench._common.stage import Stage, open_stage

QUERY = "us presidents"
# The 2026-shaped results page (tests/_serp_pages.py): an AI Overview at the top, the 2026
# snippets, forum and short-video blocks, and inline scripts and styles to a real page's
# weight (1.2-1.8 MB in 2026; this one about 1.8 MB).
QUERY_2026 = "why is the sky blue"
PADDING_2026_KB = 1700


# -- pages ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One kind of call: a Google search for the heavy page, a page read for the light one."""

    name: str
    action: str  # "search" | "read"
    page: Path
    size: int
    target: str = ""  # the query or the URL, set once the server runs
    rows: frozenset[int] | None = None  # the rows that run it (None: all)


# -- the stage: server, Chromium, settings ------------------------------------------------------


@dataclass
class Bench:
    """The shared stage (server, Chromium, settings) and the two workloads on it."""

    stage: Stage
    workloads: list[Workload]
    # Measured by rows 1 and 4 only, in the main table (the 2026 results page).
    extra: list[Workload] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        return self.stage.endpoint


def open_bench(heavy: Path, light: Path, *, headful: bool) -> Bench:
    stage = open_stage(headful=headful)
    heavy_body, light_body = read_page(heavy), read_page(light)
    stage.server.add("/search", Served(heavy_body))
    article_url = stage.server.add("/article/light.html", Served(light_body))
    body_2026 = _page_2026()
    stage.server.add(f"/search?q={quote_plus(QUERY_2026)}&", Served(body_2026))
    return Bench(
        stage,
        [
            Workload("heavy", "search", heavy, len(heavy_body), QUERY),
            Workload("light", "read", light, len(light_body), article_url),
        ],
        [
            Workload(
                "heavy26",
                "search",
                Path("tests/_serp_pages.py"),
                len(body_2026),
                QUERY_2026,
                frozenset({1, 4}),
            )
        ],
    )


def _page_2026() -> bytes:
    from tests._serp_pages import page_2026

    return page_2026(QUERY_2026, padding_kb=PADDING_2026_KB).encode()


class FloorRow:
    """Row 4: bare Playwright, connected once, its tab reused: goto + content(), no layers."""

    key = 4

    def __init__(self, stage: Stage) -> None:
        from playwright.sync_api import sync_playwright

        self.settings = stage.settings
        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.connect_over_cdp(stage.endpoint)
        self.context = self.browser.contexts[0]
        self.page = self.context.new_page()

    def url(self, work: Workload) -> str:
        if work.action == "read":
            return work.target
        from search.providers.google import search_url

        return search_url(work.target, self.settings)

    def run(self, work: Workload) -> None:
        self.page.goto(self.url(work), wait_until="domcontentloaded")
        self.page.content()

    def quiesce(self) -> None:
        """Let every tab finish loading before the next timed call (not timed)."""
        for page in list(self.context.pages):
            with contextlib.suppress(Exception):
                page.wait_for_load_state("load", timeout=5000)

    def viewer_dcl_ms(self, url_prefix: str) -> float | None:
        """DOMContentLoaded of another tab on `url_prefix` (the tool's owned tab), by nav timing."""
        for page in self.context.pages:
            if page is self.page or not page.url.startswith(url_prefix):
                continue
            with contextlib.suppress(Exception):
                page.wait_for_load_state("domcontentloaded", timeout=5000)
                value = page.evaluate(
                    "() => { const n = performance.getEntriesByType("
                    "'navigation')[0]; return n ? n.domContentLoadedEventEnd"
                    " : null; }"
                )
                return float(value) if value is not None else None
        return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.page.close()
        with contextlib.suppress(Exception):
            self.browser.close()
        self._pw.stop()
