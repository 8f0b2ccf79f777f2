"""Starting and stopping the local broadcast Chrome (and an Xvfb display when there is none).

Chrome 136+ refuses CDP on the default profile, so a dedicated `--user-data-dir` is used and
kept between runs. CDP is bound to 127.0.0.1 only. The background-networking flags stop a
machine without internet from seeing Chromium's own connections fail many times a second.
By default Chrome is started behind the egress guard (`safety._egress`, a SOCKS5 proxy process
whose life follows Chrome's), so every connection it makes is checked after name resolution.

- `_launch`: `launch_chrome`, what ties the rooms below together.
- `_profile`: the profile's pinned preferences (WebRTC policy, screen, Local State) and the
  `xdg-settings` shim; `_switches`: the binary and its switches.
- `_display`: Xvfb and the display's size; `_process`: processes kept, stopped, and started
  without credentials; `_guard`: the egress guard's start; `_state`: the state file.
- `_cdp_http`: Chrome's DevTools endpoint over HTTP (version, tabs, free ports);
  `_screen_check`: what a Chrome we attach to lacks for a clean screen (`doctor`).
"""

from ._cdp_http import cdp_targets, cdp_version, close_target, free_port, new_target
from ._launch import launch_chrome
from ._process import is_credential_name, pid_alive, stop_pid
from ._profile import LOCAL_STATE_PREFS, SCREEN_PREFS, WEBRTC_POLICY
from ._screen_check import screen_findings
from ._state import ChromeProcess, ensure_state_dir, load_state, save_state, state_file
from ._switches import chrome_args, egress_args, find_chrome

__all__ = [
    "LOCAL_STATE_PREFS",
    "SCREEN_PREFS",
    "WEBRTC_POLICY",
    "ChromeProcess",
    "cdp_targets",
    "cdp_version",
    "chrome_args",
    "close_target",
    "egress_args",
    "ensure_state_dir",
    "find_chrome",
    "free_port",
    "is_credential_name",
    "launch_chrome",
    "load_state",
    "new_target",
    "pid_alive",
    "save_state",
    "screen_findings",
    "state_file",
    "stop_pid",
]
