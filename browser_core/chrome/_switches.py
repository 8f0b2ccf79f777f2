"""Finding the Chrome binary, and the switches a Chrome is started with (`chrome_args`), sent
through the egress guard with (`egress_args`), or needs for a clean screen when we only attach
to it (`SCREEN_SWITCHES`, which `doctor` checks)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .._errors import StreamBrowserError

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chrome(explicit: str = "") -> str:
    """Path of the Chrome/Chromium binary, or a `StreamBrowserError` saying how to get one."""
    if explicit:
        path = shutil.which(explicit) or (explicit if Path(explicit).is_file() else None)
        if path:
            return path
        raise StreamBrowserError(
            f"SB_CHROME_BINARY={explicit!r} was not found",
            hint="point it at a chromium or google-chrome binary",
        )
    for name in BINARIES:
        path = shutil.which(name)
        if path:
            return path
    raise StreamBrowserError(
        "no Chrome or Chromium found on PATH",
        hint="install it with `apt-get install chromium` (or run `make demo`)",
    )


def chrome_args(
    port: int,
    user_data_dir: str,
    *,
    headless: bool,
    window: tuple[int, int],
    extra: tuple[str, ...] = (),
) -> list[str]:
    """The flags that make a Chrome Playwright can attach to (see ENVIRONMENT notes)."""
    args = [
        f"--remote-debugging-port={port}",
        "--remote-debugging-address=127.0.0.1",
        f"--user-data-dir={user_data_dir}",
        "--profile-directory=Default",  # the profile `pin_webrtc_policy` writes to
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-features=Translate,MediaRouter,OptimizationHints",
        "--deny-permission-prompts",
        "--disable-dev-shm-usage",
        "--test-type",
        # The screen: no "Restore pages?" bubble after a crash (with the profile's exit type,
        # see `pin_screen_prefs`), the window exactly on the display at 0,0.
        "--hide-crash-restore-bubble",
        "--disable-infobars",
        "--window-position=0,0",
        f"--window-size={window[0]},{window[1]}",
        "--autoplay-policy=no-user-gesture-required",
    ]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    if headless:
        args += ["--headless", "--disable-gpu", "--mute-audio"]
    return [*args, *extra, "about:blank"]


def egress_args(proxy_port: int) -> tuple[str, ...]:
    """Chrome flags that send every connection (loopback too) through the guard on
    127.0.0.1:`proxy_port`, names unresolved. (The WebRTC switch is read by headless_shell
    and content_shell only: Chrome itself takes the policy from the profile, see
    `pin_webrtc_policy`.)"""
    return (
        f"--proxy-server=socks5://127.0.0.1:{proxy_port}",
        "--proxy-bypass-list=<-loopback>",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    )


# What a Chrome we attach to needs for a clean screen, as `stream-browser chrome` sets it
# (switch -> what the audience sees without it).
SCREEN_SWITCHES: tuple[tuple[str, str], ...] = (
    ("--hide-crash-restore-bubble", 'a "Restore pages?" bubble after a crash'),
    ("--window-position=0,0", "black bars where the window misses the display"),
    ("--deny-permission-prompts", "permission prompts"),
    ("--test-type", 'the "unsupported flag" infobar'),
)
