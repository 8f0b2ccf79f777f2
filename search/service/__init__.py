"""`stream-browser serve`: one long-lived process owns the broadcast Chrome; callers are clients.

One `BrowseTool` (one driver, one owned tab) behind one bounded FIFO queue: every caller, the
standard-library client, the CLI and MCP hosts alike, waits its turn, so two callers never
drive the screen at once (a state file is not a lock; a process is). Guards against a page in
a browser on this machine driving the service (bearer token, `Origin` and `Host` checks for
DNS rebinding, a body limit) and against a lost call on shutdown (SIGTERM drains: the running
call finishes within its deadline, new ones get 503, exit 0, Chrome keeps running).

One module a concern: `_models` (HTTP bodies), `_queue` (the line of callers), `_metrics`,
`_core` (the service object), `_readiness`, `_access` (token, browsers, `Host`, body limit),
`_token` (the token file), `_app` (routes and faces), `_bind` (the socket), `_server` (uvicorn,
deadlines, drain).
"""

from ._access import Access, Guard, allowed_hosts, is_loopback
from ._app import create_app
from ._bind import Bound, StartRefused, bind, check_exposure
from ._core import Service
from ._metrics import Metrics
from ._models import BrowseBody, BrowseReply
from ._queue import CallQueue, Draining, QueueFull, ServiceError
from ._readiness import readiness
from ._server import Prepared, prepare, serve
from ._token import ensure_token, token_path

__all__ = [
    "Access",
    "Bound",
    "BrowseBody",
    "BrowseReply",
    "CallQueue",
    "Draining",
    "Guard",
    "Metrics",
    "Prepared",
    "QueueFull",
    "Service",
    "ServiceError",
    "StartRefused",
    "allowed_hosts",
    "bind",
    "check_exposure",
    "create_app",
    "ensure_token",
    "is_loopback",
    "prepare",
    "readiness",
    "serve",
    "token_path",
]
