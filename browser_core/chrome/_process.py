"""The processes started here that outlive the call that started them (Chrome, Xvfb, the
egress guard): kept until reaped, stopped by process group, and started with an environment
that holds no credentials (what Chrome holds it can leak: it renders strangers' pages).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

# Processes started here that outlive the call that started them (Chrome, Xvfb, the egress
# guard). Each `Popen` is kept until its process is reaped: one collected while its process
# runs warns (ResourceWarning) and leaves the reaping to chance. `stop_pid` reaps and forgets.
_DETACHED: dict[int, subprocess.Popen[bytes]] = {}


def keep(proc: subprocess.Popen[bytes]) -> int:
    """Keep `proc` until it is reaped (reaping any kept process that has ended); its pid."""
    for pid, other in list(_DETACHED.items()):
        if other.poll() is not None:
            _DETACHED.pop(pid, None)
    _DETACHED[proc.pid] = proc
    return proc.pid


def forget(pid: int) -> None:
    proc = _DETACHED.pop(pid, None)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(1.0)  # reaps it, if `stop_pid` did not already


# Credentials by their variable names' endings (API keys, the service's bearer token
# `SB_SERVICE_TOKEN`, ...): no child process we start needs them, and what it holds it can
# leak (Chrome renders strangers' pages).
CREDENTIAL_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")


def is_credential_name(name: str) -> bool:
    """The environment variable `name` holds a credential a child process must not inherit."""
    return name.upper().endswith(CREDENTIAL_SUFFIXES)


def child_env(display: str | None, path_first: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not is_credential_name(k)}
    if display:
        env["DISPLAY"] = display
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH') or os.defpath}"
    return env


def stop_pid(pid: int, timeout: float = 5.0) -> bool:
    """Terminate a process group we started; True if something was stopped."""
    try:
        return _stop_group(pid, timeout)
    finally:
        forget(pid)


def _stop_group(pid: int, timeout: float) -> bool:
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid if not pid_alive(pid) else 0
        if done:
            return True
        time.sleep(0.05)
    with_suppress_kill(pid)
    return True


def pid_alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def with_suppress_kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
