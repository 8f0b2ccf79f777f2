"""Logging (browser_core/_logging.py): the library prints nothing; entry points log to stderr.

The library is imported in a fresh subprocess, as a host would, and makes calls that log
(a browser hop against a closed CDP port, a failing Gemini fake): stdout and stderr stay
empty until the host configures `logging`.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from browser_core import configure_logging
from browser_core._logging import use_library_default
from browser_core.chrome import free_port
from gemini.testing import write_fake_gemini

SECRET = "AIzaSy-logging-test-key-never-printed"

HOST = textwrap.dedent(
    """
    import sys
    {setup}
    import search
    from browser_core import build_settings
    from search import ToolContext, browse_and_search

    settings = build_settings(
        stream_browser=True, cdp_port={port}, connect_attempts=1, connect_timeout_s=1,
        gemini_cli={gemini!r}, gemini_timeout_s=10, call_deadline_s=20, cache_ttl_s=0,
    )
    search.configure(settings)
    results = [
        browse_and_search("weather in seoul", ctx=ToolContext(broadcasting=True)),
        browse_and_search("weather in busan", ctx=ToolContext(broadcasting=False)),
    ]
    sys.exit(0 if results == [None, None] else 3)
    """
)


def run_host(tmp: Path, setup: str = "") -> subprocess.CompletedProcess[str]:
    fake = write_fake_gemini(tmp / "bin", "error-json")
    script = HOST.format(setup=setup, port=free_port(), gemini=str(fake))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SB_", "CDP_", "GEMINI_"))}
    env.pop("STREAM_BROWSER", None)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_library_prints_nothing_until_the_host_configures_logging(tmp_path: Path) -> None:
    proc = run_host(tmp_path)
    assert proc.returncode == 0, proc.stderr  # both calls failed over to None, as arranged
    assert proc.stdout == ""
    assert proc.stderr == ""


def test_a_host_that_configures_logging_gets_the_events_on_its_handler(tmp_path: Path) -> None:
    setup = "import logging; logging.basicConfig(stream=sys.stderr, level=logging.INFO)"
    proc = run_host(tmp_path, setup)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "tool.done ok=False" in proc.stderr  # the events exist: they went to logging
    assert "failure_kind='gemini-auth'" in proc.stderr


@pytest.fixture
def _restore_logging() -> object:
    yield None
    use_library_default()


@pytest.mark.usefixtures("_restore_logging")
def test_configure_logging_writes_json_lines_to_stderr_with_secrets_scrubbed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("info", "json", secrets=[SECRET])
    log = structlog.get_logger("search.test")
    log.info("probe.done", provider="google", detail=f"echoed {SECRET}", api_key="x")
    log.debug("probe.hidden")
    logging.getLogger("urllib3.test").warning("a foreign record %s", SECRET)
    try:
        raise ValueError(f"bad header {SECRET}")
    except ValueError:
        log.exception("probe.crashed")
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = [json.loads(line) for line in captured.err.splitlines()]
    assert [line["event"] for line in lines] == [
        "probe.done",
        f"a foreign record {'<redacted>'}",
        "probe.crashed",
    ]
    assert lines[0]["provider"] == "google" and lines[0]["api_key"] == "<redacted>"
    assert "ValueError" in lines[2]["exception"]
    assert SECRET not in captured.err


@pytest.mark.usefixtures("_restore_logging")
def test_console_logging_follows_the_current_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("debug", "console")
    structlog.get_logger("gemini.test").debug("probe.console", n=1)
    err = capsys.readouterr().err
    assert "probe.console" in err and "n=1" in err


@pytest.mark.parametrize("entry_point", [False, True])
@pytest.mark.usefixtures("_restore_logging")
def test_capture_logs_sees_library_events_either_way(entry_point: bool) -> None:
    if entry_point:
        configure_logging("warning", "json")
    with capture_logs() as logs:
        structlog.get_logger("browser_core.test").info("probe.captured", value=2)
    assert logs == [{"event": "probe.captured", "value": 2, "log_level": "info"}]
