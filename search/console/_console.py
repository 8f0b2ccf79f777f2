"""The console object: told of every call by the service (`started`, `finished`, `refused`),
it keeps the ring, takes the stage's screenshot off the call's path, and answers `/console`
(an ASGI app the service's guard hands those paths to)."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._routing import Walk
from ..service._access import Access
from ._frames import SHOT_WIDTH, Screens, after_stage
from ._ring import CallRecord, Ring
from ._web import (
    _SAME,
    PREFIX,
    SECURITY_HEADERS,
    Gate,
    Sessions,
    _asset,
    refused,
    sign_in_page,
    web_app,
)

if TYPE_CHECKING:
    from ..service._core import Service

log = structlog.get_logger("search.console")
_TASKS_KEPT = 8  # stage screenshots in flight at once, at most


class Console:
    """The console of one service: its memory, its pictures and its pages."""

    def __init__(self, service: Service, access: Access) -> None:
        self.service = service
        self.ring = Ring()
        driver = service.tool.driver
        self.screens = Screens(
            service.settings.cdp_endpoint,
            lambda: getattr(driver, "owned_target", None),
            lambda: not service.queue.idle,
        )
        self.gate = Gate(access, Sessions())
        self.app = web_app(self.gate, self._api(), self._page)
        self._shots: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def secured(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if not _cors(k)]
                message = {**message, "headers": [*headers, *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, secured)

    # -- told by the service -----------------------------------------------------------------

    def started(self, face: str, action: str, query: str, url: str | None) -> CallRecord:
        return self.ring.started(face, action, query, url)

    def finished(self, record: CallRecord, walk: Walk) -> None:
        self.ring.finished(record, walk)
        if len(self._shots) >= _TASKS_KEPT:
            self.ring.keep_shot(record, None, "skipped: screenshots were already being taken")
            return
        task = asyncio.ensure_future(self._stage_shot(record))
        self._shots.add(task)
        task.add_done_callback(self._shots.discard)

    def refused(self, face: str, action: str, status: int, kind: str, reason: str) -> None:
        self.ring.refused(face, action, status, kind, reason)

    async def _stage_shot(self, record: CallRecord) -> None:
        """Once the stage is done with the screen (and no other call has it), a small JPEG
        of what viewers saw. The call has been answered already."""
        tool = self.service.tool
        stage_done = getattr(tool.driver, "stage_done", None)
        if stage_done is not None:

            async def done() -> None:
                future = asyncio.run_coroutine_threadsafe(stage_done(), tool.loop.loop)
                await asyncio.wrap_future(future)

            await after_stage(done)
        shot, state = await self.screens.capture(SHOT_WIDTH, 55)
        self.ring.keep_shot(record, shot, state)

    # -- the page and its data ---------------------------------------------------------------

    async def _page(self, request: Request) -> Response:
        problem = self.gate.cross_site(request, post=False)
        if problem is not None:
            return refused(request, 403, f"cross-site request refused ({problem})", _SAME)
        if not (self.gate.bearer(request) or self.gate.page_session(request)):
            log.info("console.sign_in_shown", path=request.url.path)
            return sign_in_page()
        return Response(_asset("console.html"), media_type="text/html; charset=utf-8")

    def _api(self) -> list[Route]:
        def guarded(handler: Any) -> Any:
            async def route(request: Request) -> Response:
                problem = self.gate.cross_site(request, post=False)
                if problem is not None:
                    return refused(request, 403, f"cross-site request refused ({problem})", _SAME)
                if not self.gate.signed_in(request):
                    return self.gate.not_signed_in(request)
                answer: Response = await handler(request)
                return answer

            return route

        api = PREFIX + "/api"
        return [
            Route(api + "/state", guarded(self._state), methods=["GET"]),
            Route(api + "/frame", guarded(self._frame), methods=["GET"]),
            Route(api + "/calls/{id:int}", guarded(self._call), methods=["GET"]),
            Route(api + "/calls/{id:int}/shot", guarded(self._shot), methods=["GET"]),
        ]

    async def _state(self, _request: Request) -> Response:
        status = self.service.status()
        calls = list(self.ring.calls)
        chrome = status["chrome"]
        return JSONResponse(
            {
                "instance": status.get("instance") or status["service"].get("instance"),
                "service": status["service"],
                "queue": status["queue"],
                "screen": status["screen"],
                "chrome": {k: chrome.get(k) for k in ("up", "state", "endpoint", "last_error")},
                "figures": self._figures(),
                "refusals": list(self.ring.refusals)[:20],
                "egress": list(self.ring.egress)[:30],
                "calls": [record.summary() for record in calls],
                "kinds": sorted({kind for record in calls for kind in record.kinds}),
            }
        )

    def _figures(self) -> dict[str, int]:
        """The service's call counter (prometheus_client) by outcome."""
        figures: dict[str, int] = {}
        for metric in self.service.metrics.calls.collect():
            for sample in metric.samples:
                if sample.name.endswith("_total"):
                    outcome = sample.labels.get("outcome", "?")
                    figures[outcome] = figures.get(outcome, 0) + int(sample.value)
        return figures

    async def _call(self, request: Request) -> Response:
        record = self.ring.find(request.path_params["id"])
        if record is None:
            return refused(request, 404, "no such call (only the last 200 are kept)", _RING)
        return JSONResponse(record.detail())

    async def _shot(self, request: Request) -> Response:
        record = self.ring.find(request.path_params["id"])
        shot = record.shot if record is not None else None
        if shot is None:
            return refused(request, 404, "no screenshot for this call", _RING)
        return Response(shot, media_type="image/jpeg")

    async def _frame(self, _request: Request) -> Response:
        frame, state = await self.screens.live()
        headers = {"x-frame-state": state.split(":")[0]}
        if frame is None:
            return Response(status_code=204, headers={**headers, "x-frame-why": state[:120]})
        headers["x-frame-digest"] = frame.digest
        return Response(frame.jpeg, media_type="image/jpeg", headers=headers)


_RING = "the console keeps the newest calls and screenshots only"


def _cors(name: bytes) -> bool:
    return name.lower().startswith(b"access-control-")
