"""Starting and stopping the local broadcast Chrome (and an Xvfb display when there is none).

Chrome 136+ refuses CDP on the default profile, so a dedicated `--user-data-dir` is used and
kept between runs. CDP is bound to 127.0.0.1 only. The background-networking flags stop a
machine without internet from seeing Chromium's own connections fail many times a second.
By default Chrome is started behind the egress guard (`_egress`, a SOCKS5 proxy process whose
life follows Chrome's), so every connection it makes is checked after name resolution.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ._errors import CdpUnreachable, SettingsError, StreamBrowserError

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
XVFB_DISPLAY = ":1"


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


def _cdp_json(endpoint: str, path: str, timeout: float) -> object:
    """GET `endpoint + path` as JSON, or `CdpUnreachable` saying whether anything answered."""
    try:
        with urllib.request.urlopen(f"{endpoint}{path}", timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:  # an HTTP server, but not Chrome's DevTools
        exc.close()
        raise _not_cdp(endpoint) from exc
    except http.client.HTTPException as exc:  # not HTTP at all (`BadStatusLine`)
        raise _not_cdp(endpoint) from exc
    except (OSError, ValueError) as exc:  # refused, unknown name, timeout, not a URL
        raise CdpUnreachable(
            f"no Chrome DevTools endpoint at {endpoint}",
            hint="start one with `stream-browser chrome`",
            endpoint=endpoint,
        ) from exc
    try:
        return json.loads(body)
    except ValueError as exc:
        raise _not_cdp(endpoint) from exc


def _not_cdp(endpoint: str) -> CdpUnreachable:
    return CdpUnreachable(
        f"something answers at {endpoint}, but it is not a Chrome DevTools endpoint",
        hint="another program holds that port: stop it, or use another port (CDP_PORT, or --port)",
        endpoint=endpoint,
        answered=True,
    )


def cdp_version(endpoint: str, timeout: float = 1.0) -> dict[str, str]:
    """GET /json/version; raises CdpUnreachable."""
    data = _cdp_json(endpoint, "/json/version", timeout)
    if not isinstance(data, dict):
        raise _not_cdp(endpoint)
    return {str(k): str(v) for k, v in data.items()}


def cdp_targets(endpoint: str, timeout: float = 1.0) -> list[dict[str, str]]:
    """GET /json/list (tabs and other targets)."""
    data = _cdp_json(endpoint, "/json/list", timeout)
    if not isinstance(data, list):
        raise _not_cdp(endpoint)
    return data


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """True when something already accepts connections on `host:port`."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def close_target(endpoint: str, target_id: str, timeout: float = 1.5) -> None:
    """Close one tab over HTTP (answers even when the tab's renderer is spinning)."""
    with urllib.request.urlopen(f"{endpoint}/json/close/{target_id}", timeout=timeout):
        pass


def new_target(endpoint: str, timeout: float = 1.5) -> str:
    """Open a blank tab over HTTP; its target id (works while another tab is wedged)."""
    request = urllib.request.Request(f"{endpoint}/json/new?about:blank", method="PUT")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data = json.loads(response.read())
    if not isinstance(data, dict) or not data.get("id"):
        raise _not_cdp(endpoint)
    return str(data["id"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Processes started here that outlive the call that started them (Chrome, Xvfb, the egress
# guard). Each `Popen` is kept until its process is reaped: one collected while its process
# runs warns (ResourceWarning) and leaves the reaping to chance. `stop_pid` reaps and forgets.
_DETACHED: dict[int, subprocess.Popen[bytes]] = {}


def _keep(proc: subprocess.Popen[bytes]) -> int:
    """Keep `proc` until it is reaped (reaping any kept process that has ended); its pid."""
    for pid, other in list(_DETACHED.items()):
        if other.poll() is not None:
            _DETACHED.pop(pid, None)
    _DETACHED[proc.pid] = proc
    return proc.pid


def _forget(pid: int) -> None:
    proc = _DETACHED.pop(pid, None)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(1.0)  # reaps it, if `stop_pid` did not already


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


def _filling(display: tuple[int, int]) -> tuple[int, int]:
    """The `--window-size` whose window covers a display of this size from 0,0. Chromium 156
    on X without a window manager shrinks a window of exactly the display's size by a pixel
    each way (1279x799 on 1280x800: black lines at the right and bottom); one more pixel
    each way gives a window that covers the display (its last frame pixel off-screen)."""
    return display[0] + 1, display[1] + 1


def _start_xvfb(display: str, size: tuple[int, int] = (1280, 800)) -> int | None:
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
    _keep(proc)
    for _ in range(50):
        if _display_answers(socket_path):
            break
        time.sleep(0.05)
    return proc.pid


# Credentials by their variable names' endings (API keys, the service's bearer token
# `SB_SERVICE_TOKEN`, ...): no child process we start needs them, and what it holds it can
# leak (Chrome renders strangers' pages).
CREDENTIAL_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")


def is_credential_name(name: str) -> bool:
    """The environment variable `name` holds a credential a child process must not inherit."""
    return name.upper().endswith(CREDENTIAL_SUFFIXES)


def _chrome_env(display: str | None, path_first: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not is_credential_name(k)}
    if display:
        env["DISPLAY"] = display
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH') or os.defpath}"
    return env


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
            env=_chrome_env(None),
            start_new_session=True,
        )
    finally:
        if log_path:
            log_file.close()  # type: ignore[union-attr]
    _keep(proc)
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
            xvfb_pid = _start_xvfb(display, window)
        window = _filling(display_size(display) or window)
    proxy_port = free_port() if egress else None
    if proxy_port is not None:
        extra_args = (*egress_args(proxy_port), *extra_args)
    proc = subprocess.Popen(
        [path, *chrome_args(port, profile, headless=headless, window=window, extra=extra_args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=_chrome_env(display, shim_dir),
        start_new_session=True,
    )
    _keep(proc)
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


def stop_pid(pid: int, timeout: float = 5.0) -> bool:
    """Terminate a process group we started; True if something was stopped."""
    try:
        return _stop_group(pid, timeout)
    finally:
        _forget(pid)


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


# What a Chrome we attach to needs for a clean screen, as `stream-browser chrome` sets it
# (switch -> what the audience sees without it).
SCREEN_SWITCHES: tuple[tuple[str, str], ...] = (
    ("--hide-crash-restore-bubble", 'a "Restore pages?" bubble after a crash'),
    ("--window-position=0,0", "black bars where the window misses the display"),
    ("--deny-permission-prompts", "permission prompts"),
    ("--test-type", 'the "unsupported flag" infobar'),
)


def _browser_process(port: int) -> tuple[int, list[str]] | None:
    """The pid and command line of the local browser process serving CDP on `port`."""
    wanted = f"--remote-debugging-port={port}"
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode("utf-8", "replace") for a in argv if a]
        if wanted in args and not any(a.startswith("--type=") for a in args):
            return int(entry), args
    return None


def _shim_finding(pid: int) -> list[str]:
    """Is the `xdg-settings` shim first on the PATH of Chrome's process? Only PATH is read
    from its environment (which also holds Debian's API key)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []  # another user's process: nothing to say
    path = next((e[5:].decode("utf-8", "replace") for e in environ if e.startswith(b"PATH=")), "")
    first = Path(path.split(os.pathsep)[0]) if path else None
    if first is not None and (first / "xdg-settings").is_file() and first.name == SHIM_DIR:
        return []
    return ['no xdg-settings shim first on its PATH ("Open xdg-open?" prompts from pages)']


def _pref_findings(profile_dir: Path) -> list[str]:
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


def screen_findings(endpoint: str, port: int) -> list[str]:
    """What a Chrome at `endpoint` lacks for a clean broadcast screen (empty: nothing seen).

    Reads its command line and profile when it runs on this machine; counts its tabs."""
    found = []
    with contextlib.suppress(CdpUnreachable):
        tabs = [t for t in cdp_targets(endpoint) if t.get("type") == "page"]
        if len(tabs) > 1:
            found.append(f"{len(tabs)} tabs: the audience may see a tab strip of others")
    process = _browser_process(port)
    if process is None:
        return [*found, "its command line cannot be read here (not on this machine?)"]
    pid, args = process
    found += _shim_finding(pid)
    for switch, shows in SCREEN_SWITCHES:
        if switch not in args:
            found.append(f"no {switch} ({shows})")
    profile = next((a.split("=", 1)[1] for a in args if a.startswith("--user-data-dir=")), None)
    if profile:
        found += _pref_findings(Path(profile).expanduser())
    return found
