"""Starting the broadcast Chrome: what ties the rooms together. The profile pinned, the display
made (Xvfb when there is none), Chrome started with its switches behind the egress guard, and
its CDP endpoint waited for; the tab it opened is recorded for the driver to adopt.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from .._errors import CdpUnreachable, StreamBrowserError
from ._cdp_http import cdp_targets, cdp_version, free_port, port_in_use
from ._display import XVFB_DISPLAY, display_size, filling, start_xvfb
from ._guard import start_egress_guard
from ._process import child_env, keep, stop_pid
from ._profile import pin_protocol_shim, pin_screen_prefs, pin_webrtc_policy
from ._state import ChromeProcess
from ._switches import chrome_args, egress_args, find_chrome


def launch_chrome(
    *,
    port: int,
    user_data_dir: str,
    binary: str = "",
    headless: bool = False,
    window: tuple[int, int] = (1280, 800),
    extra_args: tuple[str, ...] = (),
    startup_timeout_s: float = 15.0,
    egress: bool = True,
    allow_hosts: Iterable[str] = (),
    host_map: Mapping[str, str] | None = None,
) -> ChromeProcess:
    """Start Chrome with CDP on 127.0.0.1:`port` and wait until it answers.

    With `egress` (the default) Chrome runs behind the egress guard: internal addresses
    are refused unless `allow_hosts` (the `SB_ALLOW_HOSTS` entries) opens them; `host_map`
    sends names to fixed local addresses (bench and recorded sessions).
    """
    path = find_chrome(binary)
    if port_in_use(port):  # Chrome could not open CDP there: say so now, not in 15 s
        raise StreamBrowserError(
            f"port {port} is already in use by a program that is not a Chrome DevTools endpoint",
            hint="stop that program, or pick another port (CDP_PORT, or --port)",
        )
    profile = str(Path(user_data_dir).expanduser())
    Path(profile).mkdir(parents=True, exist_ok=True)
    pin_webrtc_policy(profile)
    pin_screen_prefs(profile)
    shim_dir = pin_protocol_shim(profile)
    display, xvfb_pid = None, None
    if not headless:
        display = os.environ.get("DISPLAY") or XVFB_DISPLAY
        if not os.environ.get("DISPLAY"):
            xvfb_pid = start_xvfb(display, window)
        window = filling(display_size(display) or window)
    proxy_port = free_port() if egress else None
    if proxy_port is not None:
        extra_args = (*egress_args(proxy_port), *extra_args)
    proc = subprocess.Popen(
        [path, *chrome_args(port, profile, headless=headless, window=window, extra=extra_args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=child_env(display, shim_dir),
        start_new_session=True,
    )
    keep(proc)
    endpoint = f"http://127.0.0.1:{port}"
    egress_pid = None
    if proxy_port is not None:
        try:
            egress_pid = start_egress_guard(
                proxy_port,
                proc.pid,
                allow_hosts=allow_hosts,
                host_map=host_map,
                log_path=Path(profile) / "egress-guard.log",
            )
        except StreamBrowserError:
            if proc.poll() is not None:  # the guard stops when Chrome is gone: say why
                raise _exited_at_start(path, proc.returncode, display) from None
            stop_pid(proc.pid)
            raise
    deadline = time.monotonic() + startup_timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise _exited_at_start(path, proc.returncode, display)
        try:
            cdp_version(endpoint, timeout=0.5)
        except CdpUnreachable:
            time.sleep(0.1)
            continue
        return ChromeProcess(
            proc.pid,
            port,
            endpoint,
            profile,
            display,
            xvfb_pid,
            headless,
            egress_pid,
            proxy_port,
            _start_target(endpoint),
        )
    stop_pid(proc.pid)
    raise CdpUnreachable(
        f"Chrome did not open CDP on {endpoint} within {startup_timeout_s:.0f} s", endpoint=endpoint
    )


def _start_target(endpoint: str) -> str | None:
    """The id of the one tab a fresh Chrome opened (None if it cannot be told within 1 s)."""
    for _ in range(10):
        try:
            tabs = [t for t in cdp_targets(endpoint) if t.get("type") == "page"]
        except CdpUnreachable:
            return None
        if len(tabs) == 1 and tabs[0].get("id"):
            return str(tabs[0]["id"])
        if tabs:
            return None
        time.sleep(0.1)
    return None


def _exited_at_start(path: str, code: int | None, display: str | None) -> StreamBrowserError:
    where = f" on display {display}" if display else ""
    return StreamBrowserError(
        f"{path} exited with code {code} at start{where}",
        hint="is the profile in use by another Chrome? try --stop first or another --port"
        + (f"; is an X server answering on {display}?" if display else ""),
    )
