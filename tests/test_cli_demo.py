"""`stream-browser demo`, the newcomer's first command after `make setup`: it must answer a
search and a read, offline, from the recordings (and exit 0), on a Chrome it starts itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from browser_core.chrome import free_port
from search.cli._demo import _recordings
from tests._service_proc import clean_env

ROOT = Path(__file__).resolve().parents[1]


def test_the_demo_picks_recordings_that_pin_an_answer() -> None:
    """A captcha recording is a regression case: the demo never shows it as its search."""
    search = _recordings("search")
    assert search and "captcha" not in search[0].name
    assert _recordings("read")


@pytest.mark.slow
def test_the_demo_answers_a_search_and_a_read_offline(tmp_path: Path) -> None:
    port = free_port()
    env = clean_env(
        CDP_PORT=str(port),
        SB_STATE_DIR=str(tmp_path / "state"),
        SB_CHROME_PROFILE=str(tmp_path / "profile"),
        GEMINI_CLI=str(tmp_path / "no-gemini-here"),
    )

    def run(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "search", "--env-file", "/nonexistent/.env", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    try:
        proc = run("demo", "--headless", timeout=180)
    finally:
        run("chrome", "--stop", "--port", str(port), timeout=60)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-2000:]
    assert out.count("==> answered by ") == 2, out[-3000:]
    assert "answered by google" in out and "answered by read" in out
    assert "<<<UNTRUSTED_WEB_EXTRACT nonce=" in out
    # it ends with the console's address and where its token is, never the token itself
    console = [line for line in out.splitlines() if "/console in your browser" in line]
    assert console and console[0] in out.splitlines()[-2:], out[-1500:]
    token_file = tmp_path / "state" / "demo-console-token"
    assert str(token_file) in console[0] and token_file.stat().st_mode & 0o777 == 0o600
    token = token_file.read_text().strip()
    assert token and token not in out and token not in proc.stderr
