"""Consent banners answered on the visible page, with DuckDuckGo's autoconsent rules.

`make setup` installs `@duckduckgo/autoconsent` (npm, MPL-2.0) into `.tools/`; its Playwright
bundle runs in every document of the owned tab, before the page's scripts, in an isolated world
(`sb-consent`) the page cannot see or tamper with. It talks to us over a CDP binding that
exists only in that world: `init` is answered with our config and the rules that can apply to
the frame, `eval` (a rule's snippet that must read the page's own globals, `window.Cookiebot`)
is run in the frame's main world, and the results (`popupFound`, `optOutResult`,
`autoconsentDone`) are logged. Cross-site frames (Sourcepoint's message iframe) are separate
targets: each gets the same set-up on its own session. `SB_CONSENT=reject` opts out, `accept`
opts in, `off` leaves banners alone. Without the package, nothing is injected and reads work
as before (`doctor` says the screen will show banners). Every failure here is logged and
swallowed: a banner left on screen must never cost an answer.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import structlog
from playwright.async_api import CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

from .._background import in_background
from .._settings import Settings
from ._perpage import PerPage
from ._screen import add_installer

log = structlog.get_logger("browser_core.stage.consent")

PACKAGE = "@duckduckgo/autoconsent"
WORLD = "sb-consent"
_BINDING = "__sbConsentSend"
_ROOT = Path(__file__).resolve().parents[2]
_SEARCH_DIRS = (
    _ROOT / ".tools" / "node_modules",
    Path("/usr/local/lib/node_modules"),
    Path("/usr/lib/node_modules"),
)
_CDP_TIMEOUT_S = 1.0
_EVAL_TIMEOUT_MS = 1000
_EVENTS_KEPT = 64
# Messages worth keeping (for the log and for tests); `report` comes every few hundred ms.
_NOTABLE = frozenset(
    {"cmpDetected", "popupFound", "optOutResult", "optInResult", "autoconsentDone",
     "autoconsentError", "selfTestResult"}
)  # fmt: skip

# Google's and YouTube's full-page consent walls (consent.google.com, consent.youtube.com) are
# answered by the providers themselves (search/providers/google.py `answer_consent`, with the
# same choice): a second click racing theirs would break their wait for the navigation.
_LEFT_TO_PROVIDERS = ("google-consent-standalone",)

# The binding takes one string: the bundle's `autoconsentSendMessage(object)` is wrapped.
_NAME = json.dumps(_BINDING)
_SHIM = (
    f"(() => {{ const send = globalThis[{_NAME}]; if (typeof send !== 'function') return;"
    f" delete globalThis[{_NAME}];"
    " window.autoconsentSendMessage = (m) => { try { send(JSON.stringify(m)); } catch (e) {}"
    " return Promise.resolve(); }; })();\n"
)


@dataclass(frozen=True)
class ConsentBundle:
    """The installed package: the content script (with our shim) and its rule files."""

    version: str
    directory: Path
    script: str
    _compact: dict[str, Any] = field(repr=False)
    _full_rules_path: Path = field(repr=False)
    # (rule index, its URL pattern compiled or None, its run context), for every rule.
    _checks: tuple[tuple[int, Matcher, int], ...] = field(repr=False)
    _json: dict[tuple[bool, tuple[int, ...]], str] = field(repr=False, default_factory=dict)

    def rules_for(self, url: str, *, main_frame: bool, opt_in: bool) -> str:
        """The rule bundle (JSON text) for a frame, like the package's `filterCompactRules`:
        a frame gets only frame rules, a top page the generic rules plus those whose URL
        pattern matches. Opting in needs the full rules (the compact ones drop optIn steps)."""
        if opt_in:
            return _full_rules(self._full_rules_path)
        index = self._compact["index"]
        if main_frame:
            low, high = index["specificRuleRange"]
            first, last = index["genericRuleRange"]
            generic = tuple(range(first, last))
        else:
            low, high = index["frameRuleRange"]
            generic = ()
        chosen = generic + tuple(
            i for i, matcher, context in self._checks[low:high]
            if _runs_here(matcher, context, url, main_frame)
        )  # fmt: skip
        key = (main_frame, chosen)
        if key not in self._json:
            self._json[key] = self._encode(main_frame, chosen)
        return self._json[key]

    def _encode(self, main_frame: bool, chosen: tuple[int, ...]) -> str:
        compact, index = self._compact, self._compact["index"]
        strings = compact["s"]
        if not main_frame:
            strings = strings[: index["frameStringEnd"]]
        elif chosen == tuple(range(*index["genericRuleRange"])):
            strings = strings[: index["genericStringEnd"]]
        rules = [compact["r"][i] for i in chosen]
        return json.dumps({"compact": {"v": compact["v"], "s": strings, "r": rules}})


def find_bundle() -> ConsentBundle | None:
    """The installed autoconsent, or None (looked up once per process)."""
    return _find_bundle()


@lru_cache(maxsize=1)
def _find_bundle() -> ConsentBundle | None:
    for base in _SEARCH_DIRS:
        directory = base / PACKAGE
        try:
            return _load_bundle(directory)
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            continue
    return None


def _load_bundle(directory: Path) -> ConsentBundle:
    meta = json.loads((directory / "package.json").read_text(encoding="utf-8"))
    script = (directory / "dist" / "autoconsent.playwright.js").read_text(encoding="utf-8")
    compact = json.loads((directory / "rules" / "compact-rules.json").read_text(encoding="utf-8"))
    for key in ("v", "s", "r", "index"):
        compact[key]
    full = directory / "rules" / "rules.json"
    if not full.is_file():
        raise OSError(f"{full} is missing")
    checks = tuple((i, _compile(rule[3]), rule[4]) for i, rule in enumerate(compact["r"]))
    return ConsentBundle(
        version=str(meta.get("version", "?")),
        directory=directory,
        script=_SHIM + script,
        _compact=compact,
        _full_rules_path=full,
        _checks=checks,
    )


# `^https?://(www\.)?example\.com/`: nine in ten rules' URL patterns have this shape, and a
# prefix test replaces compiling them (about 0.1 s for all, on every start).
_SIMPLE = re.compile(r"\^https(\\?\?)?://(\(www\\\.\)\?)?((?:[a-z0-9-]+\\\.)+[a-z0-9-]+)(/?)")
Matcher = re.Pattern[str] | tuple[str, ...] | None


def _compile(pattern: Any) -> Matcher:
    """URL prefixes for a simple pattern, else the compiled pattern (None: no pattern, or
    one Python cannot read: the content script decides)."""
    if not pattern or not isinstance(pattern, str):
        return None
    branches = [_SIMPLE.fullmatch(branch) for branch in pattern.split("|")]
    if all(branches):
        return tuple(p for m in branches if m for p in _prefixes(m))
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _prefixes(match: re.Match[str]) -> list[str]:
    schemes = ("https://", "http://") if match.group(1) else ("https://",)
    hosts = ("", "www.") if match.group(2) else ("",)
    rest = match.group(3).replace("\\.", ".") + match.group(4)
    return [scheme + www + rest for scheme in schemes for www in hosts]


@lru_cache(maxsize=1)
def _full_rules(path: Path) -> str:
    return json.dumps({"autoconsent": json.loads(path.read_text(encoding="utf-8"))["autoconsent"]})


def _runs_here(matcher: Matcher, context: int, url: str, main_frame: bool) -> bool:
    """The package's `shouldRunRuleInContext`: run context code, then the URL pattern."""
    if main_frame and context == 1:
        return False
    if not main_frame and context in (20, 22, 10, 12):
        return False
    if matcher is None:
        return True
    if isinstance(matcher, tuple):
        return url.startswith(matcher)
    return matcher.search(url) is not None


def consent_mode(settings: Settings) -> str:
    """`reject`, `accept` or `off`: SB_CONSENT, else what SB_GOOGLE_CONSENT says."""
    return settings.consent or settings.google_consent


def _config(opt_in: bool) -> dict[str, Any]:
    return {
        "enabled": True,
        "autoAction": "optIn" if opt_in else "optOut",
        "disabledCmps": list(_LEFT_TO_PROVIDERS),
        "enablePrehide": True,  # known banners are hidden until answered: no flash on air
        "enableCosmeticRules": True,
        "enableGeneratedRules": True,
        "enableHeuristicDetection": False,  # the maintained rules only, never a guess
        "enablePopupMutationObserver": False,
        "detectRetries": 20,
        "isMainWorld": False,
        "prehideTimeout": 2000,
        "visualTest": False,
        "performanceLoggingEnabled": False,
        "heuristicPopupSearchTimeout": 0,
        "heuristicMode": "off",
        "logs": {
            "lifecycle": False,
            "rulesteps": False,
            "detectionsteps": False,
            "evals": False,
            "errors": False,
            "messages": False,
            "waits": False,
        },
    }


@dataclass(frozen=True)
class ConsentEvent:
    """One notable message from a frame: `popupFound`, `optOutResult`, ..."""

    type: str
    cmp: str
    url: str
    result: bool | None
    at: float


class _Target:
    """One CDP session (the tab, or one cross-site frame) and its execution contexts."""

    def __init__(self, owner: ConsentController, session: CDPSession, main_frame: str | None):
        self.owner = owner
        self.session = session
        self.main_frame = main_frame  # None: every frame of this target is a subframe
        self.isolated: dict[int, str] = {}  # our world's context id -> frame id
        self.default: dict[str, int] = {}  # frame id -> its page world's context id

    async def install(self) -> None:
        send = self.session.send
        self.session.on("Runtime.executionContextCreated", self._created)
        self.session.on("Runtime.executionContextDestroyed", self._destroyed)
        self.session.on("Runtime.executionContextsCleared", self._cleared)
        self.session.on("Runtime.bindingCalled", self._called)
        await send("Page.enable")  # without it, scripts for a named world never run
        await send("Runtime.enable")
        await send("Runtime.addBinding", {"name": _BINDING, "executionContextName": WORLD})
        await send(
            "Page.addScriptToEvaluateOnNewDocument",
            {"source": self.owner.bundle.script, "worldName": WORLD},
        )

    async def run_in_current(self, frame_id: str) -> None:
        """The document already loaded (an adopted tab, a frame found late): start it there."""
        world = await self.session.send(
            "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD}
        )
        await self.session.send(
            "Runtime.evaluate",
            {"expression": self.owner.bundle.script, "contextId": world["executionContextId"]},
        )

    def _created(self, event: dict[str, Any]) -> None:
        context = event.get("context") or {}
        aux = context.get("auxData") or {}
        frame_id, context_id = aux.get("frameId"), context.get("id")
        if not isinstance(frame_id, str) or not isinstance(context_id, int):
            return
        if aux.get("isDefault"):
            self.default[frame_id] = context_id
        elif context.get("name") == WORLD:
            self.isolated[context_id] = frame_id

    def _destroyed(self, event: dict[str, Any]) -> None:
        context_id = event.get("executionContextId")
        self.isolated.pop(context_id, None)  # type: ignore[arg-type]

    def _cleared(self, _event: Any) -> None:
        self.isolated.clear()
        self.default.clear()

    def _called(self, event: dict[str, Any]) -> None:
        if event.get("name") != _BINDING:
            return
        context_id = event.get("executionContextId")
        frame_id = self.isolated.get(context_id)  # type: ignore[arg-type]
        if frame_id is None or not isinstance(context_id, int):
            return  # only our own world's binding is ever answered
        try:
            message = json.loads(str(event.get("payload", "")))
        except ValueError:
            return
        if isinstance(message, dict):
            self.owner.spawn(self._handle(message, context_id, frame_id))

    async def _handle(self, message: dict[str, Any], context_id: int, frame_id: str) -> None:
        kind = message.get("type")
        if kind == "init":
            await self._answer_init(message, context_id, frame_id)
        elif kind == "eval":
            await self._answer_eval(message, context_id, frame_id)
        elif kind in _NOTABLE:
            self.owner.record(message)

    async def _answer_init(self, message: dict[str, Any], context_id: int, frame_id: str) -> None:
        opt_in = self.owner.opt_in
        url = str(message.get("url", ""))
        rules = self.owner.bundle.rules_for(
            url, main_frame=frame_id == self.main_frame, opt_in=opt_in
        )
        config = json.dumps(_config(opt_in))
        await self._reply(f'{{"type":"initResp","config":{config},"rules":{rules}}}', context_id)

    async def _answer_eval(self, message: dict[str, Any], context_id: int, frame_id: str) -> None:
        """A rule's snippet, run in the frame's page world (only our world can ask)."""
        code, request_id = message.get("code"), message.get("id")
        page_world = self.default.get(frame_id)
        result = False
        if isinstance(code, str) and page_world is not None:
            answer = await self.session.send(
                "Runtime.evaluate",
                {
                    "expression": code,
                    "contextId": page_world,
                    "returnByValue": True,
                    "awaitPromise": True,
                    "timeout": _EVAL_TIMEOUT_MS,
                },
            )
            value = (answer.get("result") or {}).get("value")
            result = bool(value) and "exceptionDetails" not in answer
        reply = {"type": "evalResp", "id": request_id, "result": result}
        await self._reply(json.dumps(reply), context_id)

    async def _reply(self, message_json: str, context_id: int) -> None:
        await self.session.send(
            "Runtime.evaluate",
            {
                "expression": f"window.autoconsentReceiveMessage({message_json})",
                "contextId": context_id,
            },
        )


class ConsentController:
    """Autoconsent on one tab: its sessions, the messages it got, its background tasks."""

    def __init__(self, page: Page, bundle: ConsentBundle, opt_in: bool) -> None:
        self.page = page
        self.bundle = bundle
        self.opt_in = opt_in
        self.events: deque[ConsentEvent] = deque(maxlen=_EVENTS_KEPT)
        self._targets: list[_Target] = []
        self._frames: weakref.WeakSet[Frame] = weakref.WeakSet()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        session = await self.page.context.new_cdp_session(self.page)
        tree = await session.send("Page.getFrameTree")
        main_frame = str(tree["frameTree"]["frame"]["id"])
        target = _Target(self, session, main_frame)
        await target.install()
        self._keep(target)
        if self.page.url.startswith(("http://", "https://")):
            await target.run_in_current(main_frame)
        self.page.on("framenavigated", self._frame_navigated)
        for frame in self.page.frames[1:]:
            self._frame_navigated(frame)

    def answered(self, since: float = 0.0) -> list[ConsentEvent]:
        """Results (`optOutResult`/`optInResult`) received at or after `since`."""
        return [e for e in self.events if e.at >= since and e.type.endswith("Result")]

    def spawn(self, coro: Any) -> None:
        in_background(self._tasks, _quietly(coro))

    def record(self, message: dict[str, Any]) -> None:
        result = message.get("result")
        event = ConsentEvent(
            type=str(message.get("type")),
            cmp=str(message.get("cmp", ""))[:80],
            url=str(message.get("url", ""))[:200],
            result=result if isinstance(result, bool) else None,
            at=time.monotonic(),
        )
        self.events.append(event)
        if event.type in ("optOutResult", "optInResult", "popupFound", "autoconsentError"):
            log.info(
                "consent." + event.type, cmp=event.cmp, result=event.result, url=event.url[:120]
            )

    def _keep(self, target: _Target) -> None:
        """Hold `target` while its session lives: a frame's session ends with the frame, and
        a tab showing page after page would otherwise keep one per frame it ever had."""
        self._targets.append(target)
        target.session.once("close", lambda *_: self._forget(target))

    def _forget(self, target: _Target) -> None:
        if target in self._targets:
            self._targets.remove(target)

    def _frame_navigated(self, frame: Frame) -> None:
        """A cross-site frame is its own target: give it the same set-up once."""
        if frame.parent_frame is None or frame in self._frames:
            return
        if not frame.url.startswith(("http://", "https://")):
            return
        self._frames.add(frame)
        self.spawn(self._attach_frame(frame))

    async def _attach_frame(self, frame: Frame) -> None:
        try:
            session = await self.page.context.new_cdp_session(frame)
        except PlaywrightError:
            return  # same-process frame: the tab's session already covers it
        target = _Target(self, session, None)
        await target.install()
        self._keep(target)
        tree = await session.send("Page.getFrameTree")
        await target.run_in_current(str(tree["frameTree"]["frame"]["id"]))


async def _quietly(coro: Any) -> None:
    """A tab that navigates or closes mid-answer is normal: nothing escapes as a traceback."""
    try:
        await asyncio.wait_for(coro, _CDP_TIMEOUT_S * 2)
    except (PlaywrightError, TimeoutError, KeyError, TypeError, ValueError) as exc:
        log.debug("consent.message_dropped", error=str(exc)[:200])


_CONTROLLERS: PerPage[ConsentController] = PerPage("consent")


def controller_for(page: Page) -> ConsentController | None:
    """The consent controller installed on `page`, if any (for tests and diagnostics)."""
    return _CONTROLLERS.get(page)


async def install_consent(page: Page, settings: Settings) -> None:
    """Answer consent banners on every document `page` shows from now on (and the current
    one). Does nothing with SB_CONSENT=off or without the package; never raises."""
    mode = consent_mode(settings)
    if mode == "off" or page in _CONTROLLERS:
        return
    try:  # the first look reads the rules (about 20 ms; the thread fills the cache anyway)
        bundle = await asyncio.wait_for(asyncio.to_thread(find_bundle), _CDP_TIMEOUT_S)
    except TimeoutError:
        log.warning("consent.install_skipped", reason="the rules took too long to read")
        return
    if bundle is None:
        log.info("consent.unavailable", fix="run `make setup` (installs " + PACKAGE + ")")
        return
    controller = ConsentController(page, bundle, opt_in=mode == "accept")
    started = time.monotonic()
    try:
        await asyncio.wait_for(controller.start(), _CDP_TIMEOUT_S)
    except (PlaywrightError, TimeoutError, KeyError, TypeError) as exc:
        log.warning("consent.install_failed", error=str(exc)[:200])
        return
    _CONTROLLERS.set(page, controller)
    log.debug(
        "consent.installed",
        mode=mode,
        version=bundle.version,
        elapsed_ms=round((time.monotonic() - started) * 1000),
    )


_MISSING = (
    f"{PACKAGE} is not installed: the broadcast screen will show cookie and consent banners "
    "(reads still work)",
    "run `make setup` (or `make tools`; it needs npm)",
)


def consent_check(settings: Settings) -> tuple[bool, str, str]:
    """For `doctor`: (ok, what the screen will do with consent banners, the fix)."""
    mode = consent_mode(settings)
    if mode == "off":
        return True, "left on the broadcast screen (SB_CONSENT=off)", ""
    bundle = find_bundle()
    if bundle is None:
        return False, *_MISSING
    verb = "rejected" if mode == "reject" else "accepted"
    return True, f"{verb} on the broadcast screen by {PACKAGE} {bundle.version}", ""


def consent_problem() -> str | None:
    """None when banners will be answered (or are meant to stay), else what the screen will
    show and the fix."""
    if find_bundle() is not None:
        return None
    return "; ".join(_MISSING)


def describe(settings: Settings) -> str:
    """One line: what happens to consent banners on the broadcast screen."""
    ok, detail, _ = consent_check(settings)
    return f"consent banners: {detail}" if ok else f"consent banners: NOT answered ({detail})"


# Applied by the clean screen to every page the driver takes (after its own set-up).
add_installer(install_consent)
