"""The console object: told of every call by the service (`started`, `finished`, `refused`),
it keeps the ring, takes the stage's screenshot off the call's path, and answers `/console`
(an ASGI app the service's guard hands those paths to)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .._alerts import PARSE_SUSPECT
from .._routing import Walk
from ..service._access import Access
from ._frames import SHOT_WIDTH, Screens, after_stage
from ._ring import CallRecord, Ring
from ._web import (
    _SAME,
    PREFIX,
    SECURITY_HEADERS,
    Gate,
    Person,
    Sessions,
    _asset,
    _bounded_body,
    refused,
    sign_in_page,
    web_app,
)
from ._wheel import Wheel, WheelError

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
        self.wheel = Wheel(service, self.ring)
        self.app = web_app(self.gate, [*self._api(), *self._acts()], self._page)
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

    async def _state(self, request: Request) -> Response:
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
                "alerts": [
                    {**alert, "rest": status["engines"].get(str(alert.get("provider")))}
                    for alert in status["alerts"]
                ],
                "cases": status.get("cases", []),
                "hold": self._hold(self.gate.person(request)),
                "screen_log": list(self.ring.screen)[:20],
            }
        )

    def _hold(self, person: Person | None) -> dict[str, Any] | None:
        held = self.wheel.hold.current()
        if held is None:
            return None
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(held.since))
        mine = person is not None and held.owner == person.owner
        return {"holder": held.name, "since": since, "mine": mine}

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

    # -- the wheel: a signed-in person acts on the screen -------------------------------------

    def _acts(self) -> list[Route]:
        def acting(handler: Callable[[Person, str, dict[str, Any]], Awaitable[Response]]) -> Any:
            async def route(request: Request) -> Response:
                problem = self.gate.cross_site(request, post=True)
                if problem is not None:
                    return refused(request, 403, f"cross-site request refused ({problem})", _SAME)
                person = self.gate.person(request)
                if person is None:
                    return self._no_person(request)
                body = await _bounded_body(request)
                try:
                    data = json.loads(body or b"{}")
                    if not isinstance(data, dict):
                        raise ValueError("not an object")
                    return await handler(person, _name(data, person), data)
                except ValueError:
                    return refused(request, 400, "the body is not a JSON object", _JSON)
                except WheelError as exc:
                    return refused(request, exc.status, exc.message, exc.fix)
                except TimeoutError:  # the tool loop did not answer within the step's bound
                    return refused(request, 504, "the broadcast Chrome did not answer", _AGAIN)

            return route

        screen = PREFIX + "/api/screen"
        return [
            Route(screen + "/take", acting(self._take), methods=["POST"]),
            Route(screen + "/give-back", acting(self._give_back), methods=["POST"]),
            Route(screen + "/input", acting(self._input), methods=["POST"]),
            Route(screen + "/navigate", acting(self._navigate), methods=["POST"]),
            Route(screen + "/back", acting(self._back), methods=["POST"]),
            Route(screen + "/forward", acting(self._forward), methods=["POST"]),
            Route(screen + "/frames", self._frames, methods=["GET"]),
            Route(PREFIX + "/api/alerts/dismiss", acting(self._dismiss), methods=["POST"]),
        ]

    def _no_person(self, request: Request) -> JSONResponse:
        if self.gate.signed_in(request):  # the bearer token: a program, not a person
            return refused(request, 403, _NOT_A_PERSON, _SIGN_IN_TO_ACT)
        return self.gate.not_signed_in(request)

    async def _take(self, person: Person, name: str, _data: dict[str, Any]) -> Response:
        await self.wheel.take(person.owner, name)
        return JSONResponse({"holder": name, "url": self.wheel.driver.owned_url})

    async def _give_back(self, person: Person, name: str, _data: dict[str, Any]) -> Response:
        if not self.wheel.give_back(person.owner, name):
            raise WheelError(409, "you do not hold the screen", "nothing to give back")
        # The person may have solved an engine's challenge: the next search asks it again.
        for engine in self.service.tool.end_rests():
            self.ring.screen_event(f"{engine} searches again (its rest ended)", name)
        return JSONResponse({"holder": None})

    async def _input(self, person: Person, _name: str, data: dict[str, Any]) -> Response:
        await self.wheel.act(person.owner, data)
        return Response(status_code=204)

    async def _navigate(self, person: Person, name: str, data: dict[str, Any]) -> Response:
        url = data.get("url")
        if not isinstance(url, str) or not url.strip() or len(url) > 2000:
            raise WheelError(422, "url must be an address of 1 to 2000 characters", _JSON)
        shown = await self.wheel.navigate(person.owner, name, url.strip())
        return JSONResponse({"url": shown})

    async def _back(self, person: Person, name: str, _data: dict[str, Any]) -> Response:
        return JSONResponse({"url": await self.wheel.back(person.owner, name)})

    async def _forward(self, person: Person, name: str, _data: dict[str, Any]) -> Response:
        return JSONResponse({"url": await self.wheel.forward(person.owner, name)})

    async def _dismiss(self, _person: Person, name: str, data: dict[str, Any]) -> Response:
        provider = str(data.get("provider") or "")[:40]
        kind = str(data.get("kind") or "")[:40] or None
        alerts = getattr(self.service.tool, "alerts", None)
        by = f"dismissed in the console by {name}"
        if alerts is None or not alerts.clear(provider, by=by, kind=kind):
            raise WheelError(404, "no such alert", "see the alerts in /console/api/state")
        self.ring.screen_event(f"dismissed the {provider} alert", name)
        if kind != PARSE_SUSPECT:  # a refusal dealt with: the engine searches again
            self.service.tool.end_rests([provider])
        return Response(status_code=204)

    async def _frames(self, request: Request) -> Response:
        problem = self.gate.cross_site(request, post=False)
        if problem is not None:
            return refused(request, 403, f"cross-site request refused ({problem})", _SAME)
        person = self.gate.person(request)
        if person is None:
            return self._no_person(request)
        if not self.wheel.hold.holds(person.owner):
            return refused(request, 409, "you do not hold the screen", "take the screen first")
        return StreamingResponse(
            self.wheel.frames(person.owner), media_type="application/octet-stream"
        )


def _name(data: dict[str, Any], person: Person) -> str:
    """What the console calls its person: the name they gave (short, printable), and which
    console."""
    given = data.get("name")
    given = " ".join(given.split())[:40] if isinstance(given, str) else ""
    return f"{given} ({person.label})" if given and given.isprintable() else person.label


_NOT_A_PERSON = "only a person signed in to the console can take or act on the screen"
_SIGN_IN_TO_ACT = "sign in at /console in a browser; the bearer token reads, it never acts"
_JSON = "send a JSON object, as the console's page does"
_RING = "the console keeps the newest calls and screenshots only"
_AGAIN = "try again in a moment"


def _cors(name: bytes) -> bool:
    return name.lower().startswith(b"access-control-")
