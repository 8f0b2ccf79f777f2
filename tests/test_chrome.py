"""Starting the broadcast Chrome's virtual display: a display socket left behind by a killed X
server must not make Chrome start with no display (it exits at once). The profile preferences
pinned at every start change only what they name."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from browser_core.chrome import stop_pid
from browser_core.chrome._display import _display_answers, start_xvfb
from browser_core.chrome._process import child_env
from browser_core.chrome._profile import pin_protocol_shim, pin_screen_prefs

pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb (make setup)")


def unused_display() -> int:
    for number in range(90, 140):
        if (
            not Path(f"/tmp/.X11-unix/X{number}").exists()
            and not Path(f"/tmp/.X{number}-lock").exists()
        ):
            return number
    pytest.skip("no free display number between :90 and :139")


def test_a_socket_left_by_a_killed_x_server_is_replaced_by_a_live_display() -> None:
    number = unused_display()
    path = Path(f"/tmp/.X11-unix/X{number}")
    path.parent.mkdir(mode=0o1777, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stale:
        stale.bind(str(path))  # the file stays when the socket closes: nobody listens on it
    assert path.exists() and not _display_answers(path)
    pid = None
    try:
        pid = start_xvfb(f":{number}")
        assert pid is not None, "the stale socket was taken for a running X server"
        assert _display_answers(path)
        assert start_xvfb(f":{number}") is None  # a live display is used as it is
    finally:
        if pid is not None:
            stop_pid(pid)
        path.unlink(missing_ok=True)


def test_chromes_path_finds_a_shim_that_says_chrome_handles_every_scheme_and_nothing_more(
    tmp_path: Path,
) -> None:
    """Chrome asks `xdg-settings check default-url-scheme-handler SCHEME` before it offers to
    open another program; the shim on its PATH answers yes (see docs/screen-clean.md)."""
    folder = pin_protocol_shim(str(tmp_path))
    env = child_env(None, folder)

    def xdg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["xdg-settings", *args], env=env, capture_output=True, text=True, timeout=5
        )

    for scheme in ("tel", "mailto", "zoommtg"):
        check = xdg("check", "default-url-scheme-handler", scheme, "chromium.desktop")
        assert (check.returncode, check.stdout.strip()) == (0, "yes")
    assert xdg("set", "default-web-browser", "other.desktop").returncode == 1
    assert xdg("get", "default-url-scheme-handler", "tel").returncode == 1
    (folder / "xdg-settings").write_text("#!/bin/sh\necho no\n")
    pin_protocol_shim(str(tmp_path))  # a changed shim is written again at the next start
    assert xdg("check", "default-url-scheme-handler", "tel", "x.desktop").stdout.strip() == "yes"


def test_pinning_the_screen_preferences_refuses_popups_and_keeps_the_other_settings(
    tmp_path: Path,
) -> None:
    prefs = tmp_path / "Default" / "Preferences"
    prefs.parent.mkdir()
    site = "https://example.com:443,*"
    prefs.write_text(
        json.dumps(
            {
                "profile": {
                    "default_content_setting_values": {"popups": 1, "notifications": 2},
                    "content_settings": {
                        "exceptions": {
                            "popups": {site: {"setting": 1}},
                            "cookies": {site: {"setting": 2}},
                        }
                    },
                    "name": "Broadcast",
                },
                "printing": {"enabled": True, "print_header_footer": False},
            }
        )
    )
    pin_screen_prefs(str(tmp_path))
    data = json.loads(prefs.read_text())
    profile = data["profile"]
    assert profile["default_content_setting_values"] == {"popups": 2, "notifications": 2}
    assert profile["content_settings"]["exceptions"] == {
        "popups": {},
        "cookies": {site: {"setting": 2}},
    }
    assert profile["name"] == "Broadcast" and profile["exit_type"] == "Normal"
    assert data["printing"] == {"enabled": False, "print_header_footer": False}
    assert data["download_restrictions"] == 3
    before = prefs.stat().st_mtime_ns
    pin_screen_prefs(str(tmp_path))  # nothing to change: the file is left alone
    assert prefs.stat().st_mtime_ns == before
