"""The broadcast profile's pinned settings, written before every start: the WebRTC policy
(no UDP around the egress guard), the screen's preferences and Local State's (merged at any
depth), and the `xdg-settings` shim that keeps Chrome from offering to open other programs.
`pref_findings` says what a profile lacks of them (for `doctor`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from .._errors import StreamBrowserError

# Before Chrome offers to open another program for a `mailto:`, `tel:` or app address ("Open
# xdg-open?", or for mailto: `xdg-open` at once) it asks `xdg-settings check
# default-url-scheme-handler SCHEME chromium.desktop`; when the answer is "yes" (Chrome itself
# handles the scheme) it drops the request without a word. Chrome's PATH starts with a folder
# of the profile whose `xdg-settings` always answers so: no page, frame or click of any origin
# can ask, while or after a driver is attached (measured on Chromium 156).
SHIM_DIR = "stream-browser-bin"
XDG_SETTINGS_SHIM = """#!/bin/sh
# stream-browser: Chrome handles every scheme itself, so it never asks to open another program.
if [ "$1" = check ]; then echo yes; exit 0; fi
exit 1
"""


def pin_protocol_shim(user_data_dir: str) -> Path:
    """Write the `xdg-settings` shim into the profile; the folder to put first on PATH."""
    folder = Path(user_data_dir) / SHIM_DIR
    shim = folder / "xdg-settings"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not shim.is_file() or shim.read_text(encoding="utf-8") != XDG_SETTINGS_SHIM:
            shim.write_text(XDG_SETTINGS_SHIM, encoding="utf-8")
        shim.chmod(0o755)
    except OSError as exc:
        raise StreamBrowserError(
            f"cannot write {shim}: {exc.strerror or exc}",
            hint="check the profile folder's permissions (CHROME_PROFILE_DIR), or pick another",
        ) from exc
    return folder


WEBRTC_POLICY = "disable_non_proxied_udp"


def pin_webrtc_policy(user_data_dir: str, profile: str = "Default") -> None:
    """Keep WebRTC's UDP (STUN, TURN, ICE checks) from going around the proxy.

    Chrome ignores `--force-webrtc-ip-handling-policy`: it reads the profile preference
    `webrtc.ip_handling_policy`, so a page's RTCPeerConnection would otherwise send UDP
    straight to any address it names (loopback, private, metadata), never meeting the
    guard. With `disable_non_proxied_udp` WebRTC only uses TCP through the proxy.
    Written before every start (Chrome keeps it); raises `StreamBrowserError` if it cannot.
    """
    path = Path(user_data_dir) / profile / "Preferences"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}  # none yet (or unreadable, which Chrome would reset anyway)
    if not isinstance(data, dict):
        data = {}
    webrtc = data.get("webrtc")
    if not isinstance(webrtc, dict):
        webrtc = data["webrtc"] = {}
    if webrtc.get("ip_handling_policy") == WEBRTC_POLICY:
        return
    webrtc["ip_handling_policy"] = WEBRTC_POLICY
    _write_json(path, data, "the WebRTC policy")


def _write_json(path: Path, data: dict[str, object], what: str) -> None:
    """Replace the JSON file at `path` at once (Chrome never reads half a file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(data), encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        raise StreamBrowserError(
            f"cannot write {what} in {path}: {exc}",
            hint="the profile folder must be writable",
        ) from exc


# What a page could otherwise put on the broadcast screen by itself, closed Chrome-wide in
# the profile of a Chrome we start (measured on Chromium 156, headful on Xvfb): downloads are
# refused with no file and no bubble (`download_restrictions` 3 = block all), `print()`
# shows no preview (`printing.enabled`), a crash leaves no "Restore pages?" bubble
# (`exit_type`, with `--hide-crash-restore-bubble`), and a popup no user gesture opened
# (`window.open` on a timer, attached or not) is refused by Chrome's popup blocker: its
# default is pinned to block (2) and the sites allowed popups are forgotten, so a profile
# where someone once allowed them cannot open a second tab on the stream. A link a person
# clicks (a user gesture) still opens its tab, as in any Chrome; while a driver is attached
# that tab is closed at once. (`--block-new-web-contents` is a headless-shell switch: the
# Chrome we start ignores it.) An empty mapping clears what the profile holds there.
SCREEN_PREFS: dict[str, object] = {
    "download_restrictions": 3,
    "download_bubble": {"partial_view_enabled": False},
    "download": {"prompt_for_download": False},
    "printing": {"enabled": False},
    "profile": {
        "exit_type": "Normal",
        "exited_cleanly": True,
        "default_content_setting_values": {"popups": 2},
        "content_settings": {"exceptions": {"popups": {}}},
    },
}
# Chrome's own while it runs (a crash sets them): pinned at start, not checked by `doctor`.
_CHROME_KEEPS = ("profile.exit_type", "profile.exited_cleanly")
# Chrome-wide (Local State): HTTP sign-in schemes that draw a dialog are not offered, so a
# 401 `WWW-Authenticate: Basic` (page or iframe) shows the page's own error body, never
# Chrome's "Sign in" dialog, even while no driver is attached to cancel it.
LOCAL_STATE_PREFS: dict[str, object] = {"auth": {"schemes": "negotiate"}}


def _leaves(prefs: Mapping[str, object], prefix: str = "") -> Iterator[tuple[str, object]]:
    """(dotted path, value) of every setting in `prefs`; an empty mapping is one setting."""
    for key, value in prefs.items():
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _pref(data: object, path: str) -> object:
    for key in path.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _holds(have: object, want: object) -> bool:
    if isinstance(want, Mapping) and not want:
        return not have  # cleared: Chrome may drop the empty mapping, or keep it
    return have == want


def _set_pref(data: dict[str, object], path: str, value: object) -> None:
    *parents, last = path.split(".")
    for key in parents:
        child = data.get(key)
        if not isinstance(child, dict):
            child = data[key] = {}
        data = child
    data[last] = dict(value) if isinstance(value, Mapping) else value


def _merge_json(path: Path, wanted: Mapping[str, object]) -> None:
    """Set `wanted` (nested mappings, see `_leaves`) in the JSON file at `path`; untouched
    when it holds already."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}  # none yet (or unreadable, which Chrome would reset anyway)
    if not isinstance(data, dict):
        data = {}
    changed = False
    for name, value in _leaves(wanted):
        if not _holds(_pref(data, name), value):
            _set_pref(data, name, value)
            changed = True
    if changed:
        _write_json(path, data, "the broadcast preferences")


def pin_screen_prefs(user_data_dir: str, profile: str = "Default") -> None:
    """Write `SCREEN_PREFS` into the profile and `LOCAL_STATE_PREFS` into Local State
    (before every start: the exit type a crash left must be reset each time)."""
    _merge_json(Path(user_data_dir) / profile / "Preferences", SCREEN_PREFS)
    _merge_json(Path(user_data_dir) / "Local State", LOCAL_STATE_PREFS)


def pref_findings(profile_dir: Path) -> list[str]:
    found = []
    for path, wanted in (
        (profile_dir / "Default" / "Preferences", SCREEN_PREFS),
        (profile_dir / "Local State", LOCAL_STATE_PREFS),
    ):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            found.append(f"cannot read {path}")
            continue
        for name, value in _leaves(wanted):
            if name not in _CHROME_KEEPS and not _holds(_pref(data, name), value):
                found.append(f"preference {name} is not {value!r}")
    return found
