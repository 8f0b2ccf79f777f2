"""Deployment files: the container entrypoint's logic (run for real with a stand-in
`stream-browser`), and the systemd unit and Dockerfile keeping what the service needs.

No Docker engine here: the Dockerfile is checked as text, the entrypoint is executed.
"""

from __future__ import annotations

import configparser
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENTRYPOINT = ROOT / "deploy" / "entrypoint.sh"


def _entrypoint(
    tmp_path: Path, *args: str, dry_run: bool = True, **env: str
) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "bin" / "stream-browser"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\n')
    fake.chmod(0o755)
    base = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "SB_APP_DIR": str(tmp_path / "app"),
        "SB_BIN": str(fake),
        "SB_ENTRYPOINT_DRY_RUN": "1" if dry_run else "",
    }
    return subprocess.run(
        ["sh", str(ENTRYPOINT), *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=30,
    )


def _seed(folder: Path) -> Path:
    (folder / ".gemini").mkdir(parents=True)
    (folder / ".gemini" / "oauth_creds.json").write_text("{}")
    return folder


def test_oauth_without_a_seeded_login_warns_and_says_where_to_put_one(tmp_path: Path) -> None:
    result = _entrypoint(tmp_path)
    assert result.returncode == 0
    assert "no Gemini login is seeded" in result.stderr
    assert "GEMINI_OAUTH_DIR" in result.stderr and "docker/gemini-oauth" in result.stderr
    assert "would run: " in result.stdout and "stream-browser chrome" in result.stdout
    assert "serve" in result.stdout.splitlines()[-1]


@pytest.mark.parametrize("where", ["bind-mount", "GEMINI_OAUTH_DIR", "home"])
def test_a_seeded_login_anywhere_the_cli_looks_silences_the_warning(
    tmp_path: Path, where: str
) -> None:
    env = {}
    if where == "bind-mount":
        _seed(tmp_path / "app" / "docker" / "gemini-oauth")
    elif where == "GEMINI_OAUTH_DIR":
        env["GEMINI_OAUTH_DIR"] = str(_seed(tmp_path / "elsewhere"))
    else:
        _seed(tmp_path / "home")
    result = _entrypoint(tmp_path, dry_run=True, **env)
    assert result.returncode == 0 and "Gemini login" not in result.stderr


def test_apikey_mode_needs_no_login(tmp_path: Path) -> None:
    assert "Gemini login" not in _entrypoint(tmp_path, GEMINI_AUTH="APIKEY").stderr


def test_broadcasting_disabled_starts_no_chrome(tmp_path: Path) -> None:
    result = _entrypoint(tmp_path, STREAM_BROWSER="false", GEMINI_AUTH="apikey")
    assert "chrome" not in result.stdout and "serve" in result.stdout
    assert "STREAM_BROWSER=false" in result.stderr


def test_listening_beyond_loopback_without_a_token_is_pointed_out(tmp_path: Path) -> None:
    result = _entrypoint(tmp_path, SB_SERVICE_HOST="0.0.0.0", GEMINI_AUTH="apikey")
    assert "SB_SERVICE_TOKEN" in result.stderr
    quiet = _entrypoint(
        tmp_path, SB_SERVICE_HOST="0.0.0.0", SB_SERVICE_TOKEN="t" * 40, GEMINI_AUTH="apikey"
    )
    assert "SB_SERVICE_TOKEN" not in quiet.stderr


def test_for_real_it_starts_chrome_then_execs_the_service_with_the_arguments(
    tmp_path: Path,
) -> None:
    result = _entrypoint(tmp_path, "--port", "9000", dry_run=False, GEMINI_AUTH="apikey")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "calls").read_text().splitlines() == ["chrome", "serve --port 9000"]


def test_the_systemd_unit_drains_on_stop_and_stays_on_loopback() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(ROOT / "deploy" / "stream-browser.service")
    service = unit["Service"]
    assert service["ExecStart"].endswith(" serve")
    assert service["KillMode"] == "mixed" and service["KillSignal"] == "SIGTERM"
    assert int(service["TimeoutStopSec"]) >= 25 + 12  # the call deadline and Gemini's floor
    assert "SB_SERVICE_HOST=127.0.0.1" in service["Environment"] or any(
        "SB_SERVICE_HOST=127.0.0.1" in line
        for line in (ROOT / "deploy" / "stream-browser.service").read_text().splitlines()
    )


def test_the_dockerfile_runs_chromium_on_xvfb_with_the_entrypoint() -> None:
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "chromium" in text and "xvfb" in text
    assert "stream-browser-entrypoint" in text and "ENTRYPOINT" in text
    assert "/healthz" in text
    assert "playwright install" not in text
