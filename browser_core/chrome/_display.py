"""The display the broadcast Chrome is shown on: an Xvfb started when there is no $DISPLAY
(a socket left by a killed X server is replaced, not taken for a live one), its size, and the
window size that covers it.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from pathlib import Path

from .._errors import StreamBrowserError
from ._process import keep

XVFB_DISPLAY = ":1"


def _display_answers(socket_path: Path) -> bool:
    """An X server accepts connections on this socket (a file left by a killed one does not)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            sock.connect(str(socket_path))
    except OSError:
        return False
    return True


def display_size(display: str, timeout: float = 2.0) -> tuple[int, int] | None:
    """The size of X display `display` (`xdpyinfo`), or None when it cannot be told."""
    tool = shutil.which("xdpyinfo")
    if tool is None:
        return None
    try:
        out = subprocess.run(
            [tool, "-display", display],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        if line.strip().startswith("dimensions:"):
            width, _, height = line.split()[1].partition("x")
            if width.isdigit() and height.isdigit():
                return int(width), int(height)
    return None


def filling(display: tuple[int, int]) -> tuple[int, int]:
    """The `--window-size` whose window covers a display of this size from 0,0. Chromium 156
    on X without a window manager shrinks a window of exactly the display's size by a pixel
    each way (1279x799 on 1280x800: black lines at the right and bottom); one more pixel
    each way gives a window that covers the display (its last frame pixel off-screen)."""
    return display[0] + 1, display[1] + 1


def start_xvfb(display: str, size: tuple[int, int] = (1280, 800)) -> int | None:
    """Start Xvfb on `display` (`size` pixels) unless one already answers there; its pid."""
    number = display.lstrip(":").split(".")[0]
    socket_path = Path(f"/tmp/.X11-unix/X{number}")
    if _display_answers(socket_path):
        return None
    if socket_path.exists():  # left by an X server that was killed: Xvfb may take the display
        with contextlib.suppress(OSError):
            socket_path.unlink()
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        raise StreamBrowserError(
            "no $DISPLAY and no Xvfb to make one",
            hint="install it with `apt-get install xvfb`, or pass --headless",
        )
    # -nocursor: no mouse pointer parked in the middle of what the audience watches
    screen = f"{size[0]}x{size[1]}x24"
    proc = subprocess.Popen(
        [xvfb, display, "-screen", "0", screen, "-nolisten", "tcp", "-nocursor"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    keep(proc)
    for _ in range(50):
        if _display_answers(socket_path):
            break
        time.sleep(0.05)
    return proc.pid
