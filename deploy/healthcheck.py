#!/usr/bin/python3
"""The container's HEALTHCHECK: GET /healthz on the port the service was started on.

The entrypoint writes that port (SB_SERVICE_PORT, or `serve --port N`) to PORT_FILE, since a
health check runs as a new process that sees only the image's environment; without the file
SB_SERVICE_PORT is used. Standard library only; exit 0 healthy, 1 not (with one line why).
"""

import os
import sys
import urllib.request

PORT_FILE = os.environ.get("SB_PORT_FILE") or "/tmp/stream-browser-service-port"


def service_port() -> str:
    try:
        with open(PORT_FILE, encoding="ascii") as handle:
            return handle.read().strip() or os.environ.get("SB_SERVICE_PORT", "8765")
    except OSError:
        return os.environ.get("SB_SERVICE_PORT", "8765")


def main() -> int:
    url = f"http://127.0.0.1:{service_port()}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=3) as response:
            response.read()
    except OSError as exc:
        print(f"unhealthy: {url}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
