"""The standard-library client: no dependencies, never raises, `None` fast when it must.

Against a real service (here on a Unix socket), under a bare `python3 -I -S`, with the
service down (refused in milliseconds), killed mid-call, or given the wrong token.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser_core import ChromeProcess
from browser_core.chrome import free_port
from search import client
from tests._server import LocalServer, Reply
from tests._service_proc import (
    ROOT,
    ServiceProc,
    clean_env,
    close_owned_tab,
    start_service,
    wait_until,
)

CLIENT_FILE = ROOT / "search" / "client.py"
HEAVY = ("playwright", "trafilatura", "lxml", "pydantic", "structlog", "fastapi")


@pytest.fixture(scope="module")
def uds(chrome: ChromeProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProc]:
    state = tmp_path_factory.mktemp("client-state")
    service = start_service(chrome, state, SB_SERVICE_SOCKET=str(state / "sb.sock"))
    yield service
    assert service.stop() == 0


def test_importing_the_client_loads_no_third_party_module() -> None:
    code = (
        "import sys, search.client; "
        f"print([m for m in sys.modules if m.split('.')[0] in {HEAVY!r}])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_client_file_runs_under_a_bare_interpreter_against_the_service(
    uds: ServiceProc, http: LocalServer
) -> None:
    url = http.route("/bare", Reply("<title>Bare</title><p>" + "Owls are quiet. " * 40))
    result = subprocess.run(
        ["python3", "-I", "-S", str(CLIENT_FILE), url, "read", url],
        env=clean_env(SB_SERVICE_URL=uds.url, SB_SERVICE_TOKEN=uds.token),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout[-1500:]
    answer = json.loads(result.stdout)
    assert answer["result"]["provider"] == "read"
    assert "Owls are quiet." in answer["result"]["reply_text"]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_the_client_file_prints_its_help_and_sends_nothing(uds: ServiceProc, flag: str) -> None:
    before = len(uds.events("service.turn"))
    result = subprocess.run(
        ["python3", "-I", "-S", str(CLIENT_FILE), flag],
        env=clean_env(SB_SERVICE_URL=uds.url, SB_SERVICE_TOKEN=uds.token),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0
    assert result.stdout.startswith("usage: python3 client.py QUERY")
    assert "SB_SERVICE_TOKEN" in result.stdout and result.stderr == ""
    assert len(uds.events("service.turn")) == before  # no search for "--help"


def test_an_unknown_option_is_a_usage_error_not_a_search(uds: ServiceProc) -> None:
    result = subprocess.run(
        ["python3", "-I", "-S", str(CLIENT_FILE), "--verbose", "x"],
        env=clean_env(SB_SERVICE_URL=uds.url, SB_SERVICE_TOKEN=uds.token),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "unknown option --verbose" in result.stderr


def test_browse_and_search_returns_the_result_dict_over_a_unix_socket(
    uds: ServiceProc, http: LocalServer
) -> None:
    url = http.route("/uds", Reply("<p>" + "Herons wait. " * 40))
    result = client.browse_and_search(
        url, action="read", broadcasting=True, service_url=uds.url, token=uds.token
    )
    assert result is not None and result["success"] is True
    assert result["action"] == "read" and result["sources"]


def test_the_playback_controls_go_through_the_same_endpoint(
    uds: ServiceProc, http: LocalServer
) -> None:
    where = {"service_url": uds.url, "token": uds.token}
    page = http.route("/on-screen", Reply("<p>" + "Herons wait by the water. " * 40))
    read = client.browse_and_search(
        page, action="read", broadcasting=True, service_url=uds.url, token=uds.token
    )
    assert read is not None and read["success"] is True

    def on_screen() -> str:
        answer = client.request("GET", "/v1/status", service=client.Service(uds.url, uds.token))
        assert answer is not None and answer[0] == 200 and isinstance(answer[1], dict)
        return str(answer[1]["screen"]["owned_tab_url"])

    status = client.status(broadcasting=True, **where)
    assert status is not None and status["provider"] == "youtube"
    assert status["action"] == "status" and status["success"] is True
    assert "Nothing is playing on the stream." in status["reply_text"]
    paused = client.pause(broadcasting=True, **where)
    assert paused is not None and paused["success"] is False  # said, not raised
    assert paused["action"] == "pause" and "Nothing is playing" in paused["reply_text"]
    assert on_screen() == page  # looking and a pause with nothing to pause leave the page
    stopped = client.stop(broadcasting=True, **where)
    assert stopped is not None and stopped["success"] is True and stopped["action"] == "stop"
    assert "the stream shows a blank page" in stopped["reply_text"]
    assert on_screen() == "about:blank"


def test_the_token_file_is_found_through_the_state_dir(
    uds: ServiceProc, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SB_SERVICE_URL")  # the tests' guard against a developer's service
    monkeypatch.setenv("SB_STATE_DIR", str(uds.state_dir))
    monkeypatch.setenv("SB_SERVICE_SOCKET", str(uds.state_dir / "sb.sock"))
    service = client.find_service()
    assert service is not None and service.token == uds.token
    assert uds.token not in repr(service)
    answer = client.request("GET", "/v1/status")
    assert answer is not None and answer[0] == 200


def test_every_provider_failing_is_none_with_the_chain_logged(
    uds: ServiceProc, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="stream_browser.client"):
        result = client.browse_and_search(
            "off air", broadcasting=False, service_url=uds.url, token=uds.token
        )
    assert result is None
    assert "gemini: gemini-cli-missing" in caplog.text
    answer = client.browse("off air", broadcasting=False, service_url=uds.url, token=uds.token)
    assert answer is not None and answer["result"] is None and answer["chain"]


def test_a_wrong_token_is_none_and_the_log_says_how_to_fix_it(
    uds: ServiceProc, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="stream_browser.client"):
        assert client.status(service_url=uds.url, token="not-the-token") is None
    assert "SB_SERVICE_TOKEN" in caplog.text and "not-the-token" not in caplog.text


def test_a_service_that_is_down_gives_none_in_milliseconds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="stream_browser.client"):
        result = client.browse_and_search("x", service_url=url, token="t", timeout=30)
    assert result is None
    assert time.monotonic() - started < 1.0  # refused at once, not after the 30 s timeout
    assert "not running" in caplog.text


@pytest.mark.parametrize(
    "url", ["http://[not-a-host", "unix:///nonexistent/dir/sock", "ftp://127.0.0.1:1/x"]
)
def test_the_client_never_raises_on_a_bad_address(url: str) -> None:
    assert client.browse_and_search("x", service_url=url, token="t", timeout=2) is None


def test_sb_service_url_off_means_no_service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SB_SERVICE_URL", "off")
    assert client.find_service() is None
    assert client.browse_and_search("x") is None


def test_the_service_killed_mid_call_gives_none_within_the_timeout(
    chrome: ChromeProcess, tmp_path: Path, http: LocalServer
) -> None:
    service = start_service(chrome, tmp_path / "state")
    slow = http.route("/killed", Reply("<p>" + "never read. " * 40, delay_s=20))
    out: dict[str, object] = {}

    def call() -> None:
        out["result"] = client.browse_and_search(
            slow, action="read", service_url=service.url, token=service.token, timeout=40
        )
        out["done"] = time.monotonic()

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    try:
        assert wait_until(lambda: any(p.startswith("/killed") for p in http.requests), 30)
        killed = time.monotonic()
        os.kill(service.proc.pid, signal.SIGKILL)
        thread.join(40)
        service.proc.wait(10)
    finally:  # its tab still waits for the slow page: close it, leave Chrome as we found it
        close_owned_tab(chrome, tmp_path / "state")
    assert "done" in out and out["result"] is None
    # noticed when the connection dropped, not when the page (20 s) or the timeout (40 s) ended
    assert isinstance(out["done"], float) and out["done"] - killed < 10
