"""The record of a Chrome this project started (`ChromeProcess`), kept in the state folder
(`SB_STATE_DIR`) so that `--stop`, the driver and `doctor` of a later process find it; the
folder is checked writable before anything is started whose pid or lock must be kept there.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .._errors import SettingsError


@dataclass(frozen=True)
class ChromeProcess:
    """A Chrome this project started: its pid, CDP endpoint and (maybe) its Xvfb."""

    pid: int
    port: int
    endpoint: str
    user_data_dir: str
    display: str | None = None
    xvfb_pid: int | None = None
    headless: bool = False
    egress_pid: int | None = None
    egress_port: int | None = None
    # The tab Chrome opened at start (about:blank): the driver adopts it as the owned tab,
    # so the only tab of a Chrome we start is ours.
    start_target: str | None = None


def state_file(state_dir: str, port: int) -> Path:
    return Path(state_dir).expanduser() / f"chrome-{port}.json"


def ensure_state_dir(state_dir: str) -> Path:
    """The state folder (`SB_STATE_DIR`), made if missing and checked writable, before
    anything is started whose pid, lock or token must be kept there; else `SettingsError`
    naming the variable (a Chrome started without its state file cannot be stopped)."""
    path = Path(state_dir).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".write-test-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise SettingsError(
            f"SB_STATE_DIR={state_dir!r} is not a writable folder ({exc.strerror or exc}); "
            "set SB_STATE_DIR to a folder this user can write"
        ) from None
    return path


def save_state(state_dir: str, chrome: ChromeProcess) -> Path:
    path = state_file(state_dir, chrome.port)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(chrome.__dict__), encoding="utf-8")
    return path


def load_state(state_dir: str, port: int) -> ChromeProcess | None:
    path = state_file(state_dir, port)
    try:
        return ChromeProcess(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
