"""Bad input at the CLI's edge is one clear line saying what happened and how to
fix it, with the right exit code (2 for usage and settings), never a traceback, and nothing
left running that the user can no longer stop. Each test runs the real CLI in a subprocess.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from browser_core.chrome import free_port

ROOT = Path(__file__).resolve().parents[1]


def run(tmp: Path, *argv: str, timeout: str = "60", **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m search ARGV` from this checkout, in `tmp`, with a clean environment."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SB_", "CDP_", "GEMINI_"))}
    clean.pop("STREAM_BROWSER", None)
    clean.pop("STREAM_BROWSER_CONFIG", None)
    clean.update(
        {
            "LC_ALL": "C.UTF-8",
            "PYTHONPATH": str(ROOT),
            "CDP_PORT": str(free_port()),  # nothing listens: no test reaches a real Chrome
            "SB_STATE_DIR": str(tmp / "state"),
            "SB_CHROME_PROFILE": str(tmp / "profile"),
            "GEMINI_CLI": str(tmp / "no-gemini-here"),
            "SB_SERVICE_URL": "off",
            **env,
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "search", *argv],
        cwd=tmp,
        env=clean,
        capture_output=True,
        text=True,
        timeout=float(timeout),
        check=False,
    )


def usage_error(proc: subprocess.CompletedProcess[str]) -> str:
    """Exit 2, no traceback, and the stderr text."""
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    return proc.stderr


@pytest.fixture
def not_http_port() -> Iterator[int]:
    """A port held by a program that is not HTTP (it greets like an SSH server)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        server.close()


class _NotFound(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_error(404)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_port() -> Iterator[int]:
    """A port held by an ordinary web server (404 for everything)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


FAKE_CHROME = """#!{python}
import os, sys, time
open({marker!r}, "w").write(str(os.getpid()))
time.sleep(30)
"""


def fake_chrome(tmp: Path) -> tuple[Path, Path]:
    """A stand-in Chrome binary that records that it was started (and never opens CDP)."""
    marker = tmp / "fake-chrome-started"
    binary = tmp / "fake-chrome"
    binary.write_text(FAKE_CHROME.format(python=sys.executable, marker=str(marker)))
    binary.chmod(0o755)
    return binary, marker


def _kill_fake(marker: Path) -> None:
    if marker.exists():
        with contextlib.suppress(ProcessLookupError, ValueError, PermissionError):
            os.killpg(int(marker.read_text()), 9)


# -- the CDP port held by another program ---------------------------------------------------


def test_doctor_with_the_cdp_port_held_by_a_non_http_program(
    tmp_path: Path, not_http_port: int
) -> None:
    proc = run(tmp_path, "doctor", CDP_PORT=str(not_http_port))
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert "FAIL broadcast Chrome" in proc.stdout
    assert "not a Chrome DevTools endpoint" in proc.stdout


def test_doctor_does_not_say_nothing_answers_when_a_web_server_holds_the_port(
    tmp_path: Path, http_port: int
) -> None:
    proc = run(tmp_path, "doctor", CDP_PORT=str(http_port))
    assert "nothing answers" not in proc.stdout
    assert "not a Chrome DevTools endpoint" in proc.stdout


def test_chrome_on_a_port_held_by_a_non_http_program(tmp_path: Path, not_http_port: int) -> None:
    binary, marker = fake_chrome(tmp_path)
    try:
        proc = run(
            tmp_path,
            "chrome",
            "--headless",
            CDP_PORT=str(not_http_port),
            SB_CHROME_BINARY=str(binary),
        )
    finally:
        _kill_fake(marker)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert f"port {not_http_port} is already in use" in proc.stderr


def test_chrome_on_a_port_held_by_a_web_server_fails_at_once_saying_why(
    tmp_path: Path, http_port: int
) -> None:
    binary, marker = fake_chrome(tmp_path)
    started = time.monotonic()
    try:
        proc = run(
            tmp_path, "chrome", "--headless", CDP_PORT=str(http_port), SB_CHROME_BINARY=str(binary)
        )
    finally:
        _kill_fake(marker)
    assert time.monotonic() - started < 10, "it waited for a Chrome that could never answer"
    assert proc.returncode == 1
    assert f"port {http_port} is already in use" in proc.stderr
    assert "CDP_PORT" in proc.stderr  # the fix
    assert not marker.exists(), "no Chrome should be started on a taken port"


# -- settings that are URLs or hosts --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CDP_HOST", "bad host"),
        ("CDP_URL", "http://localhost:abc"),
        ("CDP_URL", "localhost:9222"),
        ("GEMINI_API_BASE", "notaurl"),
        ("GEMINI_API_BASE", "http://[::1"),
        ("SB_ALLOW_HOSTS", "http://127.0.0.1:8080/"),
        ("SB_ALLOW_HOSTS", "localhost:80a"),
    ],
)
def test_a_malformed_address_setting_is_a_settings_error(
    tmp_path: Path, name: str, value: str
) -> None:
    proc = run(tmp_path, "doctor", **{name: value})
    err = usage_error(proc)
    assert f"{name}={value!r} is not valid" in err
    assert len(err.strip().splitlines()) == 1


def test_gemini_with_a_base_url_that_is_not_a_url(tmp_path: Path) -> None:
    proc = run(
        tmp_path,
        "gemini",
        "who won",
        GEMINI_AUTH="apikey",
        GEMINI_API_KEY="AIzaSy-audit-key-never-printed",
        GEMINI_API_BASE="notaurl",
    )
    err = usage_error(proc)
    assert "GEMINI_API_BASE" in err
    assert "AIzaSy-audit-key-never-printed" not in err + proc.stdout


# -- port flags -----------------------------------------------------------------------------


@pytest.mark.parametrize("port", ["70000", "-5"])
def test_serve_with_a_port_out_of_range(tmp_path: Path, port: str) -> None:
    err = usage_error(run(tmp_path, "serve", f"--port={port}", timeout="30"))
    assert "--port" in err and "65535" in err


def test_chrome_with_a_port_out_of_range_is_a_usage_error_at_once(tmp_path: Path) -> None:
    binary, marker = fake_chrome(tmp_path)
    started = time.monotonic()
    try:
        proc = run(
            tmp_path, "chrome", "--headless", "--port", "70000", SB_CHROME_BINARY=str(binary)
        )
    finally:
        _kill_fake(marker)
    assert time.monotonic() - started < 10
    err = usage_error(proc)
    assert "--port" in err and "65535" in err
    assert not marker.exists()


@pytest.mark.parametrize("value", ["-3", "9"])
def test_search_read_top_out_of_range(tmp_path: Path, value: str) -> None:
    err = usage_error(run(tmp_path, "search", "x", f"--read-top={value}", "--local"))
    assert "--read-top" in err and "0-3" in err


class _Validation422(BaseHTTPRequestHandler):
    """A service answering as FastAPI does to a body it does not accept."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps(
            {
                "detail": [
                    {
                        "type": "less_than_equal",
                        "loc": ["body", "read_top"],
                        "msg": "Input should be less than or equal to 3",
                    }
                ]
            }
        ).encode()
        self.send_response(422)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_service_refusal_says_why_not_none(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Validation422)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        proc = run(tmp_path, "status", SB_SERVICE_URL=url, SB_SERVICE_TOKEN="t0ken")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    err = usage_error(proc)
    assert "None" not in err
    assert "read_top: Input should be less than or equal to 3" in err


def test_a_malformed_service_url_is_a_settings_error(tmp_path: Path) -> None:
    err = usage_error(run(tmp_path, "status", SB_SERVICE_URL="garbage"))
    assert "SB_SERVICE_URL='garbage' is not valid" in err


# -- SB_STATE_DIR that cannot be written ----------------------------------------------------


def test_chrome_with_an_unwritable_state_dir_starts_nothing(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    binary, marker = fake_chrome(tmp_path)
    try:
        proc = run(
            tmp_path,
            "chrome",
            "--headless",
            SB_STATE_DIR=str(tmp_path / "a-file" / "state"),
            SB_CHROME_BINARY=str(binary),
            timeout="40",
        )
    finally:
        started = marker.exists()
        _kill_fake(marker)
    err = usage_error(proc)
    assert "SB_STATE_DIR" in err
    assert not started, "Chrome was started with nowhere to keep its pid: `--stop` cannot stop it"


def test_serve_with_an_unwritable_state_dir(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    proc = run(tmp_path, "serve", "--port", "0", SB_STATE_DIR=str(tmp_path / "a-file" / "state"))
    err = usage_error(proc)
    assert "SB_STATE_DIR" in err


# -- empty arguments ------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["read", ""], ["ask", " "]], ids=["read", "ask"])
def test_an_empty_argument_is_a_usage_error_like_search_and_play(
    tmp_path: Path, argv: list[str]
) -> None:
    err = usage_error(run(tmp_path, *argv))
    assert "is empty" in err
    assert "every provider failed" not in err


# -- .env and --env-file --------------------------------------------------------------------


def test_a_dotenv_file_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes("CDP_PORT=9222\n".encode("utf-16"))
    err = usage_error(run(tmp_path, "doctor"))
    assert ".env" in err and "UTF-8" in err


def test_a_dotenv_line_that_does_not_parse_is_not_silently_dropped(tmp_path: Path) -> None:
    secret = "AIzaSy-audit-key-in-a-broken-line"
    (tmp_path / ".env").write_text(f'STREAM_BROWSER=true\nGEMINI_API_KEY="{secret}\n')
    proc = run(tmp_path, "doctor")
    err = usage_error(proc)
    assert ".env line 2" in err
    assert secret not in err + proc.stdout


# -- playwright.config.toml -----------------------------------------------------------------


def test_a_bad_value_in_the_config_file_names_the_file_and_key(tmp_path: Path) -> None:
    config = tmp_path / "playwright.config.toml"
    config.write_text('[cdp]\nport = "abc"\n')
    env = {"STREAM_BROWSER_CONFIG": str(config)}
    # not `run`: it sets CDP_PORT, and here the value must come from the file alone
    proc = subprocess.run(
        [sys.executable, "-m", "search", "doctor"],
        cwd=tmp_path,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith(("SB_", "CDP_"))},
            "PYTHONPATH": str(ROOT),
            "SB_STATE_DIR": str(tmp_path / "state"),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    err = usage_error(proc)
    assert "cdp.port" in err and str(config) in err
    assert "CDP_PORT" not in err  # the user never set that variable


# -- recordings from outside the project folder ---------------------------------------------


def test_an_unknown_replay_outside_the_project_folder_says_how_to_find_recordings(
    tmp_path: Path,
) -> None:
    proc = run(tmp_path, "search", "x", "--replay", "google-crow-names-en")
    assert "Traceback" not in proc.stderr
    assert "no recording 'google-crow-names-en'" in proc.stderr
    assert "SB_RECORDINGS_DIR" in proc.stderr  # the fix: where recordings are looked for


def test_a_reader_that_goes_away_gets_no_traceback(tmp_path: Path) -> None:
    """`stream-browser doctor | head -1`: the pipe closes before the command prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SB_", "CDP_", "GEMINI_"))}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "CDP_PORT": str(free_port()),
            "SB_STATE_DIR": str(tmp_path / "state"),
            "SB_SERVICE_URL": "off",
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "search", "doctor"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    with proc.stderr:
        stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
