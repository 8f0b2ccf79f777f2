"""Forwarding MCP calls to a running `stream-browser serve` (one owner of the screen), and its
refusals as failure kinds."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any

from browser_core import FailureKind, Hop, Settings, ToolExecutionResult

from .._routing import Walk
from .._types import ToolContext
from ._tools import (
    BrowseCall,
)

_SERVICE_REFUSALS: dict[int, tuple[FailureKind, str]] = {
    401: (
        FailureKind.UNAUTHORIZED,
        "give this process the service's token: SB_SERVICE_TOKEN, or SB_STATE_DIR pointing at "
        "the service's state directory (its token file)",
    ),
    422: (FailureKind.BAD_ARGUMENTS, "fix the arguments and call again"),
    429: (FailureKind.QUEUE_FULL, "the service is busy: retry in a few seconds"),
    503: (FailureKind.SERVICE_UNAVAILABLE, "the service is shutting down: retry once it is back"),
}


def _service_hop(kind: FailureKind, detail: str, hint: str) -> Hop:
    return Hop(
        provider="service", ok=False, elapsed_ms=0, failure_kind=kind, detail=detail, hint=hint
    )


def walk_from_reply(answer: tuple[int, Any] | None, where: str) -> Walk:
    """The service's `/v1/browse` reply (from `search.client.request`) as a walk."""
    from search import client

    if answer is None:
        return Walk(
            None,
            [
                _service_hop(
                    FailureKind.SERVICE_UNAVAILABLE,
                    f"no answer from the service at {where}",
                    "start it with `stream-browser serve`, or run `stream-browser mcp --via "
                    "local` to drive the broadcast Chrome from this process",
                )
            ],
        )
    status, data = answer
    if status == 200 and isinstance(data, dict) and "chain" in data:
        result = data.get("result")
        return Walk(
            ToolExecutionResult.model_validate(result) if isinstance(result, dict) else None,
            [Hop.model_validate(hop) for hop in data["chain"]],
        )
    kind, hint = _SERVICE_REFUSALS.get(
        status, (FailureKind.SERVICE_UNAVAILABLE, "see the service's log (stderr)")
    )
    error = client.error_message(data)
    return Walk(None, [_service_hop(kind, f"the service answered {status}: {error}", hint)])


def forward_to(service: Any, timeout_s: float) -> BrowseCall:
    """A `BrowseCall` that hands every call to a running `stream-browser serve` (the one owner
    of the screen, with its queue) through the standard-library client `search.client`."""
    from search import client

    async def call(
        query: str,
        *,
        action: str,
        url: str | None,
        ctx: ToolContext,
        engine: str | None = None,
    ) -> Walk:
        body: dict[str, Any] = {"query": query, "action": action}
        if ctx.broadcasting is not None:
            body["broadcasting"] = ctx.broadcasting
        if url:
            body["url"] = url
        if engine:
            body["engine"] = engine
        answer = await asyncio.to_thread(
            client.request, "POST", "/v1/browse", body, service=service, timeout=timeout_s
        )
        return walk_from_reply(answer, service.url)

    return call


def service_for(settings: Settings) -> Any | None:
    """Where the service listens and its token, from the settings (`.env` included);
    `SB_SERVICE_URL` (the client's own variable) wins, and `off` means none."""
    from search import client

    override = os.environ.get("SB_SERVICE_URL", "").strip()
    if override.lower() in ("off", "none", "false", "0"):
        return None
    if override:
        url = override
    elif settings.service_socket:
        url = "unix://" + os.path.expanduser(settings.service_socket)
    else:
        host = settings.service_host
        url = f"http://{f'[{host}]' if ':' in host else host}:{settings.service_port}"
    token = settings.service_token.get_secret_value() if settings.service_token else None
    if token is None:
        path = os.path.join(os.path.expanduser(settings.state_dir), client.TOKEN_FILE_NAME)
        with contextlib.suppress(OSError), open(path, encoding="utf-8") as handle:
            token = handle.read().strip() or None
    return client.Service(url, token, client.MCP_AGENT)


def reachable_service(settings: Settings, probe_s: float = 1.0) -> Any | None:
    """`service_for(settings)` if it answers `/healthz` now; else None."""
    from search import client

    service = service_for(settings)
    if service is None:
        return None
    quiet = logging.getLogger(client.log.name)
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "not running" is an answer here, not a warning
    try:
        answer = client.request("GET", "/healthz", service=service, timeout=probe_s)
    finally:
        quiet.setLevel(level)
    return service if answer is not None and answer[0] == 200 else None
