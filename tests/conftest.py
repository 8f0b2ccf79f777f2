"""Shared test set-up: a real Debian Chromium over CDP, a local HTTP server, clean settings.

No test reaches the internet: Google and YouTube addresses are routed to saved pages, and
nothing reads the developer's `.env` or environment (every known variable is cleared).
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_core import (
    ChromeProcess,
    Settings,
    SyncDriver,
    build_settings,
    launch_chrome,
    stop_pid,
)
from browser_core._logging import use_library_default
from browser_core.chrome import free_port
from tests._lanes import make_lane_scheduler
from tests._server import LocalServer

ENV_PREFIXES = ("STREAM_BROWSER", "CDP_", "GEMINI_", "GOOGLE_", "SB_")


def _uses_playwright(item: pytest.Item) -> bool:
    return "browser_name" in getattr(item, "fixturenames", ())


# The serial tests in two lanes, one per worker (`make test`: `-n 2 --dist loadgroup -m serial`;
# tests/_lanes.py): what the screen shows (a picture and the stage's time-bounded work), and
# what holds a deadline or counts memory and objects. Each lane runs its tests one at a time,
# beside the other.
SCREEN_FILES = frozenset(
    {"tests/test_stage_screen.py", "tests/test_stage_covers.py", "tests/test_stage_focus.py"}
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    return make_lane_scheduler(config, log, SCREEN_FILES)


def pytest_itemcollected(item: pytest.Item) -> None:
    """pytest-playwright's tests (its sync `page` and kin) are marked `sync_playwright`,
    before `-m` picks: its event loop keeps running in the worker's thread for the rest of
    the session, where any later `asyncio.run` fails, so `make test` runs them in a pytest
    process of their own (`-m sync_playwright`)."""
    if _uses_playwright(item):
        item.add_marker(pytest.mark.sync_playwright)


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with the most `slow` tests first, then the rest by their number of tests,
    each file's tests together and in their order; pytest-playwright's tests and their files
    after the rest. `make test` hands the files to its workers in this order
    (`--no-loadscope-reorder`): a file of one long test handed out last kept one worker busy
    while the other sat idle (xdist's own order, by number of tests, put the 77 s bench smoke
    at the end). (pytest-playwright's session-scoped `browser_name` parameter also lets pytest
    regroup tests: a test argument merely named `page` once pulled them ahead of the
    recordings.)"""
    playwright = {_file(item) for item in items if _uses_playwright(item)}
    tests: Counter[str] = Counter(_file(item) for item in items)
    slow: Counter[str] = Counter(_file(item) for item in items if item.get_closest_marker("slow"))
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(_file(item), index)

    def key(item: pytest.Item) -> tuple[bool, bool, int, int, int]:
        name = _file(item)
        return (name in playwright, _uses_playwright(item), -slow[name], -tests[name], first[name])

    items.sort(key=key)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith(ENV_PREFIXES) and name != "STREAM_BROWSER_CONFIG":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SB_SERVICE_URL", "off")  # the CLI never reaches a developer's service
    yield
    use_library_default()  # undo an entry point's configure_logging: back to the library's own


def _need_chromium() -> None:
    if not (shutil.which("chromium") or shutil.which("google-chrome")):
        pytest.fail("Chromium is not installed: run `make test` (it installs Debian chromium)")


@pytest.fixture(scope="session")
def chrome(
    tmp_path_factory: pytest.TempPathFactory, server: LocalServer
) -> Iterator[ChromeProcess]:
    """The session's broadcast Chrome (headless), attached to over CDP by every test.

    It runs behind the egress guard like the product's, which opens only the local server,
    and resolves no name but `localhost` (sent to the local server: a frame of another site
    on it), like Chrome's `MAP * ~NOTFOUND`: a page a test names by a real host, left to the
    network (the next result read unseen, say), is refused there and never leaves loopback.
    """
    _need_chromium()
    profile = tmp_path_factory.mktemp("chrome-profile")
    proc = launch_chrome(
        port=free_port(),
        user_data_dir=str(profile),
        headless=True,
        allow_hosts=(f"127.0.0.1:{server.port}", f"localhost:{server.port}"),
        host_map={"localhost": f"127.0.0.1:{server.port}", "*": ""},
    )
    yield proc
    stop_pid(proc.pid)


@pytest.fixture(scope="session")
def server() -> Iterator[LocalServer]:
    srv = LocalServer()
    yield srv
    srv.stop()


@pytest.fixture
def http(server: LocalServer) -> Iterator[LocalServer]:
    """The local server with this test's routes cleared afterwards."""
    yield server
    server.reset()


def make_settings(chrome: ChromeProcess | None, tmp: Path, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "cdp_port": chrome.port if chrome else free_port(),
        "allow_hosts": ("127.0.0.1",),
        "state_dir": str(tmp / "state"),
        "cache_ttl_s": 0,
        "settle_ms": 200,
        "op_timeout_s": 15,
        "nav_timeout_s": 10,
        "gemini_cli": str(tmp / "no-gemini-here"),
        # Tests of the results page itself; the search that reads its top result
        # (SB_SEARCH_READ=auto, the default) has tests of its own.
        "search_read": "never",
    }
    values.update(extra)
    return build_settings(**values)


@pytest.fixture
def settings(chrome: ChromeProcess, tmp_path: Path) -> Settings:
    return make_settings(chrome, tmp_path)


@pytest.fixture
def sync_driver(settings: Settings) -> Iterator[SyncDriver]:
    drv = SyncDriver(settings)
    yield drv
    drv.shutdown()


# pytest-playwright: use Debian's Chromium for its `page` fixture (never `playwright install`).
@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {
        **browser_type_launch_args,
        "executable_path": shutil.which("chromium") or "/usr/bin/chromium",
        "args": ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    }
