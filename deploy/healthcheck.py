#!/usr/bin/python3
"""The container's HEALTHCHECK: GET /healthz on the port the service was started on; with
`--chrome` (an orchestrator's liveness probe) the broadcast Chrome must answer too.

The entrypoint writes that port (SB_SERVICE_PORT, or `serve --port N`) to PORT_FILE, since a
health check runs as a new process that sees only the image's environment; without the file
SB_SERVICE_PORT is used. `/healthz` answers while Chrome is wedged (it asks nothing of it),
so `--chrome` also asks Chrome's DevTools endpoint (`/json/version` on CDP_URL, else
127.0.0.1:CDP_PORT), which a frozen or dead Chrome never answers; skipped with
STREAM_BROWSER=false (no broadcast Chrome). Standard library only; exit 0 healthy, 1 not
(with one line why).
"""

import os
import sys
import urllib.request

PORT_FILE = os.environ.get("SB_PORT_FILE") or "/tmp/stream-browser-service-port"
TIMEOUT_S = 3.0  # a probe's own timeout (Kubernetes: timeoutSeconds) should be above it


def service_port() -> str:
    try:
        with open(PORT_FILE, encoding="ascii") as handle:
            return handle.read().strip() or os.environ.get("SB_SERVICE_PORT", "8765")
    except OSError:
        return os.environ.get("SB_SERVICE_PORT", "8765")


def chrome_url() -> str | None:
    if os.environ.get("STREAM_BROWSER", "true").strip().lower() in {"false", "0", "no", "off"}:
        return None
    base = os.environ.get("CDP_URL", "").strip().rstrip("/")
    if not base.startswith(("http://", "https://")):
        base = f"http://127.0.0.1:{os.environ.get('CDP_PORT') or '9222'}"
    return f"{base}/json/version"


def answers(url: str, what: str) -> bool:
    # no proxy: these are local addresses, whatever the environment says
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=TIMEOUT_S) as response:
            response.read()
    except OSError as exc:
        print(f"unhealthy: {url}: {exc} ({what})", file=sys.stderr)
        return False
    return True


def main(argv: list[str]) -> int:
    if not answers(f"http://127.0.0.1:{service_port()}/healthz", "the service"):
        return 1
    url = chrome_url() if "--chrome" in argv else None
    if url is not None and not answers(url, "the broadcast Chrome does not answer: wedged or gone"):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
