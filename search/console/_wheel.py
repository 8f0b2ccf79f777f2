"""The wheel: a person in the console takes the broadcast tab, acts on it, and gives it back.

Frames are pushed by Chrome (`Page.startScreencast` on a CDP session of the owned page) only
while the holder's console streams them, and only when the page changes. Chrome's screencast
drops a frame now and then, the last one of a burst too, so the picture is also taken from
the page itself (one screenshot) once the frames go quiet after a change, and after each
navigation, input or Back: the newest picture is the page as it is, not a frame it has left
(nothing more while nothing changes, nothing while nobody watches). The person's
clicks, wheel and typing go to that page (`Input.dispatchMouseEvent`, `dispatchKeyEvent`,
`insertText`), never to Chrome's own interface; an address they type opens through the
navigation policy (`Driver.navigate`, `check=True`), and so does Back or Forward: a history
entry the policy refuses is skipped, never loaded.

Guards against a person fighting a call: the screen is taken on the tab's turn (between
calls, `Driver.take_screen`) and calls are refused while it is held (`ScreenHold`). Guards
against keystrokes reaching a log: only takes, give backs and navigations are recorded.
Everything Playwright does runs on the tool's loop thread; frames cross to the service's
loop by `call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import struct
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog
from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from browser_core import BlockedUrl, NavigationFailed, ProviderError

if TYPE_CHECKING:
    from ..service._core import Service
    from ._ring import Ring

log = structlog.get_logger("search.console")

SCREENCAST = {"format": "jpeg", "quality": 60, "maxWidth": 1280, "maxHeight": 800}
FRAME_WAIT_S = 1.0  # a stream checks the hold at least this often
FIRST_FRAME_S = 0.5  # no frame cast by then: the stream starts from a screenshot
# No new frame for this long after a frame, an input or a navigation: the picture is taken
# from the page (Chrome may have dropped the last frame of the change).
QUIET_S = 0.15
SNAPSHOT = {"format": "jpeg", "quality": 60}
SNAPSHOT_S = 2.0  # a screenshot takes tens of ms; one Chrome has not given by then is late
INPUT_S = 3.0  # an input the page has not taken by then is refused (a frozen renderer)
TEXT_MAX = 256
WHEEL_MAX = 2000.0
# The keys a person may press besides text, with Windows virtual key codes (what Chrome
# needs to act on them); no modifier combinations, so no browser shortcut.
KEYS: dict[str, int] = {
    "Enter": 13,
    "Backspace": 8,
    "Tab": 9,
    "Escape": 27,
    "ArrowLeft": 37,
    "ArrowUp": 38,
    "ArrowRight": 39,
    "ArrowDown": 40,
    "Delete": 46,
    "Home": 36,
    "End": 35,
    "PageUp": 33,
    "PageDown": 34,
}


class WheelError(Exception):
    """What a person asked of the screen could not be done; `status` and a fix to show."""

    def __init__(self, status: int, message: str, fix: str) -> None:
        super().__init__(message)
        self.status, self.message, self.fix = status, message, fix


@dataclass
class _Control:
    """The holder's page and its CDP session (tool loop), and its viewport in CSS pixels."""

    page: Page
    session: CDPSession
    width: float
    height: float
    casting: bool = False
    last_cast: str = ""  # the newest frame Chrome cast (base64), to tell a repeat


class Wheel:
    """One service's remote control of the broadcast tab."""

    def __init__(self, service: Service, ring: Ring) -> None:
        self.service = service
        self.ring = ring
        self.driver = service.tool.driver
        self.hold = self.driver.hold
        self._control: _Control | None = None
        self._watchers = 0
        self._frame: bytes | None = None  # the newest packed frame
        self._seq = 0
        self._due: float | None = None  # when the picture is next taken from the page
        self._changed: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the service's
        self._acks: set[asyncio.Future[Any]] = set()
        self.hold.on_release.append(self._released)

    # -- take and give back --------------------------------------------------------------

    async def take(self, owner: str, name: str) -> None:
        self._loop = asyncio.get_running_loop()
        timeout = self.service.settings.op_timeout_s
        try:
            await self._on_tool(self._attach(owner, name, timeout), timeout + 2)
        except ProviderError as exc:
            raise WheelError(409, exc.message, exc.hint or "try again between calls") from exc
        self.ring.screen_event("took the screen", name, self.driver.owned_url)
        log.info("console.screen_taken", holder=name, url=self.driver.owned_url)

    async def _attach(self, owner: str, name: str, timeout: float) -> None:
        await self._control_of(await self.driver.take_screen(owner, name, timeout))

    async def _control_of(self, page: Page) -> None:
        """Tool loop: the control (a CDP session, casting while someone watches) on `page`,
        the owned tab; moved there when it was on another (a tab the driver replaced)."""
        if self._control is not None and self._control.page is page:
            return
        if self._control is not None:
            log.info("console.tab_followed", url=page.url[:200])
        await self._detach()
        session = await page.context.new_cdp_session(page)
        size = await page.evaluate("[innerWidth, innerHeight]")
        self._control = _Control(page, session, float(size[0]), float(size[1]))
        session.on("Page.screencastFrame", self._on_frame)
        # The console's stream may have begun already: its page sees the hold (taken above)
        # in its state poll before this take's answer, and its `_cast` found no session yet.
        if self._watchers:
            await self._cast(True)
        if self._loop is not None:  # a still page casts nothing: its picture is taken
            self._loop.call_soon_threadsafe(self._refresh)

    async def _follow(self, owner: str) -> None:
        """Tool loop: the held tab is gone (the driver replaced it when it stopped answering
        or crashed): the control moves to the tab that is ours now, opened if need be."""
        control, holder = self._control, self.hold.current()
        if control is None or not control.page.is_closed():
            return
        if holder is not None and holder.owner == owner:  # still theirs, not taken back
            await self._attach(owner, holder.name, self.service.settings.op_timeout_s)

    def give_back(self, owner: str, name: str) -> bool:
        return self.hold.give_back(owner, f"given back in the console by {name}")

    def _released(self, holder: Any, why: str) -> None:
        """Any thread: the screen is free again; the CDP session goes (on the tool loop)."""
        self.ring.screen_event(f"gave the screen back ({why})", holder.name, self.driver.owned_url)
        asyncio.run_coroutine_threadsafe(self._detach(), self.service.tool.loop.loop)
        if self._loop is not None and self._changed is not None:
            self._loop.call_soon_threadsafe(self._changed.set)

    async def _detach(self) -> None:
        control, self._control = self._control, None
        if control is None:
            return
        self._frame = None  # the next hold's picture never starts from this one
        try:
            if control.casting:
                await control.session.send("Page.stopScreencast")
            await control.session.detach()
        except Exception as exc:  # the page went away with its session
            log.info("console.detach_failed", error=str(exc)[:200])

    # -- frames ---------------------------------------------------------------------------

    async def frames(self, owner: str) -> AsyncIterator[bytes]:
        """The holder's live picture: each frame as Chrome paints it, until the hold ends."""
        self._loop = asyncio.get_running_loop()
        self._changed = self._changed or asyncio.Event()
        self._watchers += 1
        seen = -1
        try:
            await self._on_tool(self._cast(True), 5)
            loop = asyncio.get_running_loop()
            self._due = loop.time() + FIRST_FRAME_S  # a still page may cast no frame
            while self.hold.holds(owner) and not self.service.draining:
                if self._due is not None and loop.time() >= self._due:
                    self._due = None
                    if not await self._on_tool(self._snapshot(), SNAPSHOT_S + 1):
                        self._due = loop.time() + QUIET_S  # late: asked for again
                if self._seq != seen and self._frame is not None:
                    seen = self._seq
                    yield self._frame
                    continue
                self._changed.clear()
                wait = FRAME_WAIT_S
                if self._due is not None:
                    wait = min(wait, max(0.0, self._due - loop.time()))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), wait)
        except Exception as exc:  # the tool loop did not answer: the console asks again
            log.warning("console.frames_ended", error=f"{type(exc).__name__}: {exc}"[:200])
        finally:
            self._watchers -= 1
            if self._watchers == 0:
                asyncio.run_coroutine_threadsafe(self._cast(False), self.service.tool.loop.loop)

    async def _cast(self, on: bool) -> None:
        control = self._control
        if control is None or control.casting == on:
            return
        control.casting = on
        method = "Page.startScreencast" if on else "Page.stopScreencast"
        await control.session.send(method, SCREENCAST if on else None)

    async def _snapshot(self) -> bool:
        """Tool loop: the picture taken from the page; False when Chrome has not given it
        within `SNAPSHOT_S` (a renderer that stalls): the stream goes on and asks again."""
        control = self._control
        if control is None or self._loop is None:
            return True
        try:
            shot = await asyncio.wait_for(
                control.session.send("Page.captureScreenshot", SNAPSHOT), SNAPSHOT_S
            )
        except TimeoutError:
            log.info("console.snapshot_late", after_s=SNAPSHOT_S, url=control.page.url[:200])
            return False
        except Exception as exc:  # the page went away: the next action follows the tab
            log.info("console.snapshot_failed", error=str(exc)[:200])
            return True
        head = {"w": control.width, "h": control.height, "url": control.page.url[:2000]}
        self._loop.call_soon_threadsafe(self._put, head, shot["data"], False)
        return True

    def _on_frame(self, params: dict[str, Any]) -> None:
        """Tool loop: acknowledge (Chrome sends the next one only then) and hand it over."""
        control = self._control
        if control is None or self._loop is None:
            return
        ack = control.session.send("Page.screencastFrameAck", {"sessionId": params["sessionId"]})
        task = asyncio.ensure_future(ack)
        self._acks.add(task)
        task.add_done_callback(self._acked)
        if params["data"] == control.last_cast:
            # The same picture again: a screenshot makes Chrome cast the page unchanged,
            # which is no change to take a picture of again.
            return
        control.last_cast = params["data"]
        meta = params.get("metadata") or {}
        control.width = float(meta.get("deviceWidth") or control.width)
        control.height = float(meta.get("deviceHeight") or control.height)
        head = {"w": control.width, "h": control.height, "url": control.page.url[:2000]}
        self._loop.call_soon_threadsafe(self._put, head, params["data"], True)

    def _acked(self, task: asyncio.Future[Any]) -> None:
        self._acks.discard(task)
        if not task.cancelled() and task.exception() is not None:  # the page went away
            log.debug("console.frame_ack_failed", error=str(task.exception())[:200])

    def _put(self, head: dict[str, Any], data: str, cast: bool) -> None:
        """Service loop: the newest picture; a cast frame means the page changed, so its
        picture is taken again once the frames go quiet."""
        self._frame = pack(head, base64.b64decode(data))
        self._seq += 1
        if cast:
            self._refresh()
        elif self._changed is not None:
            self._changed.set()

    def _refresh(self) -> None:
        """Service loop: take the picture from the page once nothing new has come for
        `QUIET_S` (a later frame or action moves it on)."""
        if self._loop is None:
            return
        self._due = self._loop.time() + QUIET_S
        if self._changed is not None:
            self._changed.set()

    # -- input and navigation ---------------------------------------------------------------

    async def act(self, owner: str, event: dict[str, Any]) -> None:
        """A click, a wheel turn, a key or some text, on the page only."""
        if not self.hold.touch(owner):
            raise WheelError(409, "you do not hold the screen", "take the screen first")
        calls = input_calls(event)
        timeout = self.service.settings.op_timeout_s + 2
        try:
            await self._on_tool(self._send(owner, calls), timeout)
        except ProviderError as exc:  # no tab to follow to (Chrome is gone)
            raise WheelError(409, exc.message, exc.hint or "give the screen back") from exc
        except TimeoutError:  # a renderer that does not run, or a tab not opened in time
            raise WheelError(
                504,
                f"the page did not take the input within {INPUT_S:.0f} s",
                "it may be busy: wait a moment, or open another address",
            ) from None
        finally:
            self._refresh()

    async def _send(self, owner: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
        await self._follow(owner)
        control = self._control
        if control is None:
            raise WheelError(409, "the broadcast tab changed", "give the screen back, take it")
        try:
            await asyncio.wait_for(self._dispatch(control, calls), INPUT_S)
        except PlaywrightError as exc:
            if not control.page.is_closed():
                raise WheelError(409, "the tab did not take the input", "try again") from exc
            log.info("console.input_tab_gone", error=str(exc)[:200])
            await self._follow(owner)  # closed under the input: once more, on the new tab
            if self._control is None or self._control is control:
                raise WheelError(409, "the broadcast tab went away", "try again") from exc
            await asyncio.wait_for(self._dispatch(self._control, calls), INPUT_S)

    @staticmethod
    async def _dispatch(control: _Control, calls: list[tuple[str, dict[str, Any]]]) -> None:
        for method, params in calls:
            if "x" in params:
                params = {
                    **params,
                    "x": params["x"] * control.width,
                    "y": params["y"] * control.height,
                }
            await control.session.send(method, params)

    async def navigate(self, owner: str, name: str, url: str) -> str:
        """Open `url` on the held tab under the navigation policy; the address it shows."""
        if not self.hold.touch(owner):
            raise WheelError(409, "you do not hold the screen", "take the screen first")

        async def go(page: Page) -> str:
            await self.driver.navigate(page, url, check=True)
            return str(page.url)

        return await self._person_op(owner, name, "navigated", url, go)

    async def back(self, owner: str, name: str) -> str:
        """The tab's Back, under the navigation policy: entries it refuses are skipped."""
        return await self._history(owner, name, -1)

    async def forward(self, owner: str, name: str) -> str:
        """The tab's Forward, under the navigation policy, as `back`."""
        return await self._history(owner, name, 1)

    async def _history(self, owner: str, name: str, step: int) -> str:
        if not self.hold.touch(owner):
            raise WheelError(409, "you do not hold the screen", "take the screen first")
        way = "back" if step < 0 else "forward"

        async def go(page: Page) -> str:
            session = await page.context.new_cdp_session(page)
            try:
                history = await session.send("Page.getNavigationHistory")
                entry = await self._allowed_entry(history, step, way)
                timeout = self.service.settings.nav_timeout_s * 1000
                main = page.main_frame
                async with page.expect_event(
                    "framenavigated", lambda frame: frame is main, timeout=timeout
                ) as went:
                    await session.send("Page.navigateToHistoryEntry", {"entryId": entry["id"]})
                await went.value  # committed; a bfcache page has no load to wait for
            finally:
                with contextlib.suppress(Exception):
                    await session.detach()
            return str(page.url)

        return await self._person_op(owner, name, f"went {way}", None, go)

    async def _allowed_entry(self, history: dict[str, Any], step: int, way: str) -> Any:
        """The nearest history entry `step` by `step` that the navigation policy allows;
        `BlockedUrl` naming the refused ones when there is none."""
        entries, index = history["entries"], history["currentIndex"]
        refused: list[BlockedUrl] = []
        at = index + step
        while 0 <= at < len(entries):
            try:
                await self.driver.check(str(entries[at]["url"]))
            except BlockedUrl as exc:
                refused.append(exc)
            else:
                return entries[at]
            at += step
        if not refused:
            raise NavigationFailed(f"the tab has no page to go {way} to", hint=_TYPE_ONE)
        first = refused[0]
        raise BlockedUrl(
            f"nothing to go {way} to: the tab's history holds only pages the navigation "
            f"policy refuses ({first.message})",
            hint=_TYPE_ONE,
            url=first.context.get("url"),
            reason=first.context.get("reason"),
        )

    async def _person_op(self, owner: str, name: str, what: str, asked: str | None, fn: Any) -> str:
        timeout = self.service.settings.nav_timeout_s + 2

        async def on_ours(page: Page) -> Any:
            if self._control is not None:  # the driver may have replaced a tab that hung
                await self._control_of(page)
            return await fn(page)

        op = self.driver.run(
            "console." + what.replace(" ", "_"), on_ours, timeout=timeout, by=owner
        )
        try:
            shown = str(await self._on_tool(op, timeout + 2))
        except ProviderError as exc:
            with contextlib.suppress(Exception):  # a tab closed by the failure: follow it now
                await self._on_tool(self._follow(owner), self.service.settings.op_timeout_s + 2)
            self._refresh()
            self.ring.screen_event(f"{what}: refused ({exc.kind})", name, asked)
            log.info("console.screen_refused", holder=name, url=asked, failure_kind=exc.kind)
            raise WheelError(422, exc.message, exc.hint or "try another address") from exc
        self._refresh()
        self.ring.screen_event(what, name, shown)
        log.info("console.screen_navigated", holder=name, what=what, url=shown)
        return shown

    async def _on_tool(self, coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self.service.tool.loop.loop)
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout)


def pack(head: dict[str, Any], jpeg: bytes) -> bytes:
    """One frame on the stream: two big-endian lengths, the JSON head, the JPEG."""
    meta = json.dumps(head).encode()
    return struct.pack(">II", len(meta), len(jpeg)) + meta + jpeg


def input_calls(event: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The CDP Input calls for one event of the console (x and y as fractions of the
    picture, scaled later); `WheelError` for anything else."""
    kind = event.get("type")
    if kind in ("click", "wheel"):
        x, y = _fraction(event.get("x")), _fraction(event.get("y"))
        if kind == "wheel":
            dx, dy = _delta(event.get("dx")), _delta(event.get("dy"))
            wheel = {"type": "mouseWheel", "x": x, "y": y, "deltaX": dx, "deltaY": dy}
            return [("Input.dispatchMouseEvent", wheel)]
        point = {"x": x, "y": y, "button": "left", "clickCount": 1}
        return [
            ("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y}),
            ("Input.dispatchMouseEvent", {"type": "mousePressed", **point}),
            ("Input.dispatchMouseEvent", {"type": "mouseReleased", **point}),
        ]
    if kind == "key":
        return _key(event.get("key"))
    if kind == "text":
        text = event.get("text")
        if not isinstance(text, str) or not 0 < len(text) <= TEXT_MAX or not text.isprintable():
            raise WheelError(422, f"text must be 1 to {TEXT_MAX} printable characters", _KEYS)
        return [("Input.insertText", {"text": text})]
    raise WheelError(422, "an event is a click, wheel, key or text", _KEYS)


def _key(name: object) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(name, str) or name not in KEYS:
        raise WheelError(422, "not a key the console forwards", _KEYS)
    code = KEYS[name]
    down: dict[str, Any] = {"type": "keyDown", "key": name, "code": name}
    down["windowsVirtualKeyCode"] = down["nativeVirtualKeyCode"] = code
    if name == "Enter":
        down["text"] = "\r"
    up = {"type": "keyUp", "key": name, "code": name, "windowsVirtualKeyCode": code}
    return [("Input.dispatchKeyEvent", down), ("Input.dispatchKeyEvent", up)]


def _fraction(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise WheelError(422, "x and y are fractions of the picture (0 to 1)", _KEYS)
    return float(value)


def _delta(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return max(-WHEEL_MAX, min(WHEEL_MAX, float(value)))


_TYPE_ONE = "type an address instead"
_KEYS = (
    "send {type: click|wheel, x, y (0-1), dx, dy}, {type: key, key: Enter|Backspace|Tab|"
    "Escape|Arrow...|Delete|Home|End|PageUp|PageDown} or {type: text, text}"
)
