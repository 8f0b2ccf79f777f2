"""Chrome's DevTools endpoint over plain HTTP: its version, its tabs, a tab opened or closed
(which works while a tab's renderer is spinning, where CDP commands hang), and the ports.

Guards against mistaking another program for Chrome: what answers and is not a DevTools
endpoint is a `CdpUnreachable` with `answered=True` that says so, and how to fix it.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request

from .._errors import CdpUnreachable


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
