"""`stream-browser demo`, the newcomer's first command after `make setup`: it must answer a
search and a read, offline, from the recordings (and exit 0), on a Chrome it starts itself;
with `--challenge`, the search then meets a stand-in of Google's challenge, which a person
solves in the broadcast Chrome (here: a second CDP client ticks the box, as a person's
click through the console does), and the search is answered on screen again."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from browser_core.chrome import free_port
from search.cli._demo import _recordings
from tests._service_proc import clean_env

ROOT = Path(__file__).resolve().parents[1]
DEMO = (sys.executable, "-m", "search", "--env-file", "/nonexistent/.env")


def test_the_demo_picks_recordings_that_pin_an_answer() -> None:
    """A captcha recording, or a kept case whose parse is suspect (the generic reading), is
    a regression case: the demo never shows it as its search."""
    search = _recordings("search")
    assert search and "captcha" not in search[0].name
    assert "google-changed-titles-en" not in [p.name for p in search]
    assert _recordings("read")


def _tick_the_box(endpoint: str) -> str:
    """What a person does on the console's picture: the stand-in's box ticked on the
    broadcast tab; the tab's title before."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(endpoint)
        try:
            pages = [p for c in browser.contexts for p in c.pages if "g-recaptcha" in p.content()]
            shown = [p.url for c in browser.contexts for p in c.pages]
            assert len(pages) == 1, f"the broadcast tab shows the challenge: {shown}"
            title = pages[0].title()
            pages[0].click("#robot")
            return title
        finally:
            browser.close()


@pytest.mark.slow
def test_the_demo_answers_offline_and_again_after_googles_challenge_is_solved(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = clean_env(
        CDP_PORT=str(port),
        SB_STATE_DIR=str(tmp_path / "state"),
        SB_CHROME_PROFILE=str(tmp_path / "profile"),
        GEMINI_CLI=str(tmp_path / "no-gemini-here"),
    )

    def run(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*DEMO, *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    errors = (tmp_path / "stderr").open("w")
    demo = subprocess.Popen(
        [*DEMO, "demo", "--headless", "--challenge"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
    )
    watchdog = threading.Timer(240, demo.kill)
    watchdog.start()
    lines, title = [], ""
    try:
        assert demo.stdout is not None
        for line in demo.stdout:
            lines.append(line)
            if "in the console: press Take the screen" in line:
                title = _tick_the_box(f"http://127.0.0.1:{port}")
        demo.wait(30)
    finally:
        watchdog.cancel()
        demo.kill()
        demo.wait(30)
        errors.close()
        if demo.stdout is not None:
            demo.stdout.close()
        run("chrome", "--stop", "--port", str(port), timeout=60)
    out, stderr = "".join(lines), (tmp_path / "stderr").read_text()
    assert demo.returncode == 0, out[-3000:] + stderr[-2000:]
    assert out.count("==> answered by ") == 3, out[-3000:]
    assert "answered by google" in out and "answered by read" in out
    # the challenge: on screen, in the walk and in the console's alert; solved, on screen again
    assert "stand-in of Google's challenge" in title
    assert "google: captcha" in out and "the console's alert: google: captcha" in out
    challenged = out.index("the console's alert")
    assert "==> answered by google" in out[challenged:], out[challenged:]
    assert "<<<UNTRUSTED_WEB_EXTRACT nonce=" in out
    # it ends with the console's address and where its token is, never the token itself
    console = [line for line in out.splitlines() if "/console in your browser" in line]
    assert console and out.index(console[0]) < challenged, out[-1500:]
    token_file = tmp_path / "state" / "demo-console-token"
    assert str(token_file) in console[0] and token_file.stat().st_mode & 0o777 == 0o600
    token = token_file.read_text().strip()
    assert token and token not in out and token not in stderr
