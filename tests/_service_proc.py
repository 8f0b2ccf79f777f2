"""Start a real `stream-browser serve` process for tests: ephemeral port, its own state dir.

The process gets a clean environment (no developer settings), the session's Chromium and a
Gemini CLI that does not exist, so every answer comes from the local pages or fails honestly.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from browser_core import ChromeProcess
from browser_core.chrome import close_target
from tests._server import LocalServer

ROOT = Path(__file__).resolve().parents[1]
ENV_PREFIXES = ("STREAM_BROWSER", "CDP_", "GEMINI_", "GOOGLE_", "SB_")
_URL = re.compile(r"serving on (\S+)")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIXES)}
    env.update(extra)
    return env


@dataclass
class ServiceProc:
    """A running service: its URL, token, process and everything it printed."""

    proc: subprocess.Popen[str]
    url: str
    token: str
    state_dir: Path
    output: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.output)

    def events(self, name: str) -> list[dict[str, Any]]:
        found = []
        for line in list(self.output):
            if line.startswith("{") and f'"{name}"' in line:
                event = json.loads(line)
                if event.get("event") == name:
                    found.append(event)
        return found

    def stop(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(5)


def start_service(
    chrome: ChromeProcess | None,
    state_dir: Path,
    *,
    on_ready: Callable[[subprocess.Popen[str]], None] | None = None,
    **env: str,
) -> ServiceProc:
    """`stream-browser serve` on 127.0.0.1:0; returns once it listens. `on_ready` is called
    with the process the moment it prints "serving on" (from the thread reading its output)."""
    values = {
        "CDP_PORT": str(chrome.port) if chrome else "9",
        "SB_STATE_DIR": str(state_dir),
        "SB_SERVICE_PORT": "0",
        "SB_ALLOW_HOSTS": "127.0.0.1",
        "SB_CACHE_TTL_S": "0",
        "SB_SETTLE_MS": "200",
        "SB_LOG_FORMAT": "json",
        "GEMINI_CLI": str(state_dir / "no-gemini-here"),
        "GEMINI_OAUTH_DIR": str(state_dir / "no-login"),
        **env,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "search", "--env-file", "/nonexistent/.env", "serve"],
        cwd=ROOT,
        env=clean_env(**values),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a signal to the test's group never reaches it
    )
    output: list[str] = []
    found = threading.Event()
    url: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        with proc.stdout:  # read to the end (the service exited), then closed
            for line in proc.stdout:
                output.append(line)
                match = _URL.search(line)
                if match and not url:
                    if on_ready is not None:
                        on_ready(proc)
                    url.append(match.group(1))
                    found.set()
        found.set()

    threading.Thread(target=pump, daemon=True).start()
    found.wait(60)
    if not url:
        proc.kill()
        raise RuntimeError("the service did not start:\n" + "".join(output))
    token = env.get("SB_SERVICE_TOKEN") or (state_dir / "service-token").read_text().strip()
    return ServiceProc(proc, url[0], token, state_dir, output)


def wait_until(predicate: Any, timeout: float = 15.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="session")
def shared_service(
    chrome: ChromeProcess, server: LocalServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceProc]:
    """One service for the test modules that only call it (import this fixture to use it).
    It allows what the session's egress guard opens: its Fetch guard sees every tab of the
    Chrome for the whole session, and refuses for them what it refuses for itself."""
    state = tmp_path_factory.mktemp("service-state")
    allow = f"127.0.0.1,localhost:{server.port}"
    service = start_service(chrome, state, SB_QUEUE_MAX="32", SB_ALLOW_HOSTS=allow)
    yield service
    assert service.stop() == 0
    close_owned_tab(chrome, state)


def close_owned_tab(chrome: ChromeProcess, state: Path) -> None:
    """Close the tab a service opened (its target id is in the state dir)."""
    for file in state.glob("owned-tab-*.json"):
        target = json.loads(file.read_text()).get("target_id")
        if target:
            close_target(chrome.endpoint, target)
