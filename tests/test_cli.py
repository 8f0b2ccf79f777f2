"""The `stream-browser` entry point (search/cli/) as a person runs it: a real subprocess.

Bad input at the edge (argv that is not UTF-8, a bad setting, a typo in the config file, a
key with a line break) is one clear line on stderr and exit code 2, never a traceback, and
never the key.
"""

from __future__ import annotations

import importlib.metadata
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from browser_core.chrome import free_port

BIN = Path(sys.executable).parent
SECRET = "AIzaSy-cli-entry-test-key-never-printed"


def run(tmp: Path, *argv: str | bytes, **env: str) -> subprocess.CompletedProcess[bytes]:
    """`stream-browser ARGV` in an empty directory with a clean environment plus `env`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SB_", "CDP_", "GEMINI_"))}
    clean.pop("STREAM_BROWSER", None)
    clean.pop("STREAM_BROWSER_CONFIG", None)
    clean.update(
        {
            "LC_ALL": "C.UTF-8",
            "CDP_PORT": str(free_port()),  # nothing listens: no test may reach a real Chrome
            "SB_STATE_DIR": str(tmp / "state"),
            "SB_CHROME_PROFILE": str(tmp / "profile"),
            "GEMINI_CLI": str(tmp / "no-gemini-here"),
            **env,
        }
    )
    return subprocess.run(
        [str(BIN / "stream-browser"), *argv],
        cwd=tmp,
        env=clean,
        capture_output=True,
        timeout=60,
        check=False,
    )


def one_line_error(proc: subprocess.CompletedProcess[bytes]) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, err
    assert "Traceback" not in err and proc.stdout == b""
    (line,) = [line for line in err.splitlines() if line.startswith("stream-browser:")]
    return line


@pytest.mark.parametrize(
    "argv",
    [
        [b"search", b"caf\xe9"],
        [b"play", b"\xff\xfe lofi"],
        [b"read", b"https://example.com/\x80"],
        [b"ask", b"ok", b"--url", b"\xc3("],
    ],
    ids=["search", "play", "read", "ask-option"],
)
def test_argv_that_is_not_utf8_is_a_usage_error(tmp_path: Path, argv: list[bytes]) -> None:
    proc = run(tmp_path, *argv)
    line = one_line_error(proc)
    assert "is not valid UTF-8" in line


def test_python_dash_m_search_gives_the_same_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "search", "search", b"caf\xe9"],
        cwd=tmp_path,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert "argument 2 is not valid UTF-8" in one_line_error(proc)


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["doctor"], {"SB_CALL_DEADLINE_S": "inf"}, "SB_CALL_DEADLINE_S='inf' is not valid"),
        (["doctor"], {"SB_OP_TIMEOUT_S": "nan"}, "SB_OP_TIMEOUT_S='nan' is not valid"),
        (["doctor"], {"GEMINI_TIMEOUT_S": "-3"}, "GEMINI_TIMEOUT_S='-3' is not valid"),
        (["chrome", "--headless"], {"SB_WINDOW_SIZE": "abc"}, "SB_WINDOW_SIZE='abc' is not valid"),
    ],
)
def test_a_bad_setting_stops_the_command_with_one_line(
    tmp_path: Path, argv: list[str], env: dict[str, str], expected: str
) -> None:
    line = one_line_error(run(tmp_path, *argv, **env))
    assert line.startswith(f"stream-browser: configuration error: {expected}: expected ")


@pytest.mark.parametrize("key", [SECRET + "\r\n", SECRET + "\nX-Injected: 1", "\x1b" + SECRET])
@pytest.mark.parametrize("argv", [["doctor"], ["ask", "weather", "--broadcasting", "false"]])
def test_a_key_with_control_characters_exits_2_and_is_never_echoed(
    tmp_path: Path, key: str, argv: list[str]
) -> None:
    proc = run(tmp_path, *argv, GEMINI_AUTH="apikey", GEMINI_API_KEY=key)
    line = one_line_error(proc)
    assert "GEMINI_API_KEY=<hidden> is not valid" in line
    assert SECRET.encode() not in proc.stdout + proc.stderr


def test_a_key_with_a_line_break_in_dotenv_is_refused_too(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b'GEMINI_API_KEY="' + SECRET.encode() + b'\\r\\n"\n')
    proc = run(tmp_path, "doctor")
    assert "GEMINI_API_KEY=<hidden> is not valid" in one_line_error(proc)
    assert SECRET.encode() not in proc.stdout + proc.stderr


def test_a_typo_in_the_config_file_stops_the_command(tmp_path: Path) -> None:
    config = tmp_path / "playwright.config.toml"
    config.write_text("[cdp]\nprot = 9333\n")
    line = one_line_error(run(tmp_path, "doctor"))
    assert line == (
        f"stream-browser: configuration error: {config}: unknown key 'cdp.prot'; "
        "did you mean 'cdp.port'? (fix or remove it)"
    )


def test_version_prints_the_installed_version_and_exits_0(tmp_path: Path) -> None:
    expected = f"stream-browser {importlib.metadata.version('stream-browser')}\n".encode()
    proc = run(tmp_path, "--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, expected, b"")
    by_module = subprocess.run(
        [sys.executable, "-m", "search", "--version"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (by_module.returncode, by_module.stdout) == (0, expected)
    assert b"--version" in run(tmp_path, "--help").stdout


def test_version_before_a_command_answers_without_running_it(tmp_path: Path) -> None:
    # A service address that accepts connections: a command sent there would be seen.
    with socket.create_server(("127.0.0.1", 0)) as service:
        url = f"http://127.0.0.1:{service.getsockname()[1]}"
        proc = run(tmp_path, "--version", "search", "weather", SB_SERVICE_URL=url)
        service.setblocking(False)
        try:
            service.accept()[0].close()
            connected = True
        except BlockingIOError:
            connected = False
    assert proc.returncode == 0 and proc.stdout.startswith(b"stream-browser ")
    assert not connected, "--version went to the service instead of answering"
