"""`stream-browser serve`: run the service that alone drives the broadcast Chrome.

Loopback TCP by default (`SB_SERVICE_HOST`/`SB_SERVICE_PORT`, 127.0.0.1:8765), or a Unix
socket (`SB_SERVICE_SOCKET`). Stops cleanly on SIGTERM (drains, exit 0); Chrome keeps running.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from search.cli._common import int_in


def register(sub: Any) -> None:
    serve = sub.add_parser(
        "serve", help="run the service: one owner of the broadcast Chrome for every caller"
    )
    serve.add_argument("--host", help="address to listen on (default SB_SERVICE_HOST, 127.0.0.1)")
    serve.add_argument(
        "--port",
        type=int_in(0, 65535, "a port number"),
        help="TCP port (default SB_SERVICE_PORT, 8765; 0: any)",
    )
    serve.add_argument("--socket", metavar="PATH", help="a Unix socket instead of TCP")
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace, app: Any) -> int:
    from search.service import StartRefused, serve

    overrides = {
        name: value
        for name, value in (
            ("service_host", args.host),
            ("service_port", args.port),
            ("service_socket", args.socket),
        )
        if value is not None
    }
    settings = app.settings.model_copy(update=overrides) if overrides else app.settings
    try:
        return serve(
            settings, ready=lambda url: print(f"stream-browser: serving on {url}", flush=True)
        )
    except StartRefused as exc:
        print(f"stream-browser serve: {exc}", file=sys.stderr)
        return 2
