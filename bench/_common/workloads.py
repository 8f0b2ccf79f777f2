"""The bench's two workloads (a Google search on the heavy results page, a read of the light
article) on its stage, and the bare-Playwright floor row: shared by `bench.warm` and
`bench.egress` (which imported them from each other before)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from bench._common.serve import Served, read_page
from bench._common.stage import Stage, open_stage

QUERY = "us presidents"


# -- pages ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One kind of call: a Google search for the heavy page, a page read for the light one."""

    name: str
    action: str  # "search" | "read"
    page: Path
    size: int
    target: str = ""  # the query or the URL, set once the server runs


# -- the stage: server, Chromium, settings ------------------------------------------------------


@dataclass
class Bench:
    """The shared stage (server, Chromium, settings) and the two workloads on it."""

    stage: Stage
    workloads: list[Workload]

    @property
    def endpoint(self) -> str:
        return self.stage.endpoint


def open_bench(heavy: Path, light: Path, *, headful: bool) -> Bench:
    stage = open_stage(headful=headful)
    heavy_body, light_body = read_page(heavy), read_page(light)
    stage.server.add("/search", Served(heavy_body))
    article_url = stage.server.add("/article/light.html", Served(light_body))
    return Bench(
        stage,
        [
            Workload("heavy", "search", heavy, len(heavy_body), QUERY),
            Workload("light", "read", light, len(light_body), article_url),
        ],
    )


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
