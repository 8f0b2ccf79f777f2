"""Starting the egress guard (`browser_core.safety._egress`, a SOCKS5 proxy process) beside
the Chrome it guards: in a session of its own, tied to Chrome's pid, answering before Chrome
is let onto the network."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from .._errors import StreamBrowserError
from ._process import child_env, keep, stop_pid


def start_egress_guard(
    proxy_port: int,
    chrome_pid: int,
    *,
    allow_hosts: Iterable[str] = (),
    host_map: Mapping[str, str] | None = None,
    log_path: Path | None = None,
    timeout_s: float = 10.0,
) -> int:
    """Start the guard process on 127.0.0.1:`proxy_port`, tied to `chrome_pid`; its pid.

    It runs in a session of its own, so it outlives the caller (the service may restart)
    and exits by itself within a second of Chrome exiting.
    """
    cmd = [sys.executable, "-m", "browser_core.safety._egress", "--port", str(proxy_port)]
    cmd += ["--watch-pid", str(chrome_pid)]
    cmd += [f"--allow={entry}" for entry in allow_hosts if entry.strip()]
    cmd += [f"--map={name}={target}" for name, target in (host_map or {}).items()]
    log_file = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            env=child_env(None),
            start_new_session=True,
        )
    finally:
        if log_path:
            log_file.close()  # type: ignore[union-attr]
    keep(proc)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", proxy_port), 0.2):
            return proc.pid
        time.sleep(0.05)
    stop_pid(proc.pid)
    raise StreamBrowserError(
        f"the egress guard did not start on 127.0.0.1:{proxy_port}",
        hint=f"see {log_path or 'its log'}; is the port in use? try again",
    )
