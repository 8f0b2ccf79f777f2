"""Starting the broadcast Chrome's virtual display: a display socket left behind by a killed X
server must not make Chrome start with no display (it exits at once)."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from browser_core._chrome import _display_answers, _start_xvfb, stop_pid

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
        pid = _start_xvfb(f":{number}")
        assert pid is not None, "the stale socket was taken for a running X server"
        assert _display_answers(path)
        assert _start_xvfb(f":{number}") is None  # a live display is used as it is
    finally:
        if pid is not None:
            stop_pid(pid)
        path.unlink(missing_ok=True)
