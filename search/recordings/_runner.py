"""Recorded sessions as regression cases: running an action through the tool's registry and
routing (so a recording pins exactly what the brain would receive), a recording folder
(`Case`), replaying it offline, and comparing outputs on the fields that stay stable between
runs. Shared by `stream-browser record`, the recording scripts and `tests/test_recordings.py`.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from browser_core import (
    Answer,
    Deadline,
    Driver,
    FailureKind,
    Hop,
    ProviderError,
    Settings,
    StreamBrowserError,
)
from browser_core.recording import RECORDINGS_DIR, SessionRecorder, replay_hook, resolve_har
from search._language import google_locale
from search._types import Request

log = structlog.get_logger("search.recordings")

ACTIONS = ("search", "read", "play")
# Settings a recording pins (so the replayed URL is the recorded one), and action options.
CASE_SETTINGS = (
    "search_engines",
    "google_hl",
    "google_gl",
    "google_udm14",
    "google_consent",
    "read_max_chars",
    "max_results",
)
ACTION_OPTIONS = ("read_top",)
TEXT_OVERLAP_MIN = 0.8


# -- running an action the way the brain's call does -------------------------------------------


@dataclass(frozen=True)
class ActionOutcome:
    """What the brain would receive (`{"result", "chain"}`, the service's answer), the text
    it would read, and whether the action succeeded."""

    payload: dict[str, Any]
    text: str
    ok: bool


class OfflineGemini:
    """Gemini's place in a recorded session. A recording holds the screen's network, not
    Gemini's: the hop fails and says so, and the chain shows where the brain falls back."""

    name = "gemini"
    actions = frozenset({"search", "read"})

    async def run(self, request: Request, settings: Settings, deadline: Deadline) -> Answer:
        raise ProviderError(
            "Gemini is not part of a recorded session",
            failure_kind=FailureKind.GEMINI_UNAVAILABLE,
            hint="`stream-browser ask` without --replay asks Gemini",
        )


async def run_action(
    driver: Driver,
    action: str,
    arg: str,
    settings: Settings,
    *,
    read_top: int = 0,
    question: str | None = None,
) -> ActionOutcome:
    """Run `search`, `read` or `play` through the tool's registry and routing, on air, with
    the driver's owned tab; Gemini is `OfflineGemini` (a recording never reaches it). A read
    may carry a `question`, as the brain's do."""
    from search._tool import BrowseTool, default_registry
    from search._types import ToolContext

    if action not in ACTIONS:
        raise StreamBrowserError(
            f"unknown action {action!r}", hint=f"use one of {', '.join(ACTIONS)}"
        )
    # No time is kept back for a Gemini that cannot answer: the screen gets the usual share.
    settings = settings.model_copy(update={"gemini_min_s": 0.0})
    tool = BrowseTool(settings, driver=driver, registry=default_registry(driver, OfflineGemini()))
    walk = await tool.arun(
        question if question and action == "read" else arg,
        action=action,
        url=arg if action == "read" else None,
        ctx=ToolContext(broadcasting=True),
        read_top=read_top,
    )
    result = walk.result
    payload = {
        "result": result.model_dump(mode="json") if result else None,
        "chain": [hop.model_dump(mode="json") for hop in walk.chain],
    }
    text = result.reply_text if result else chain_text(walk.chain)
    return ActionOutcome(payload, text, result is not None and result.success)


def chain_text(chain: Sequence[Hop]) -> str:
    """Why no provider answered, one line per failed hop."""
    lines = [
        f"{hop.provider}: {hop.failure_kind}" + (f" ({hop.detail})" if hop.detail else "")
        for hop in chain
        if not hop.ok
    ]
    return "no answer: " + ("; ".join(lines) or "no provider tried")


def error_payload(exc: StreamBrowserError) -> dict[str, Any]:
    """How a recording pins an action that failed (the CLI prints this on stderr)."""
    return {"error": {"kind": exc.kind, "message": exc.message[:300]}}


# -- recording folders ------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One folder of `tests/recordings/`: session.har, action.json, expected.json, README.md."""

    path: Path
    action: str
    arg: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def har(self) -> Path:
        return self.path / "session.har"

    @property
    def expected_path(self) -> Path:
        return self.path / "expected.json"

    def expected(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.expected_path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise StreamBrowserError(
                f"{self.expected_path}: missing or not JSON",
                hint="write it with `make update-recordings`",
            ) from exc

    def settings_for(self, base: Settings) -> Settings:
        return base.model_copy(update=self.pinned())

    def pinned(self) -> dict[str, Any]:
        """The settings the case recorded; a search recorded before Bing searched Google
        alone (its replay never asks an engine the recording does not hold)."""
        pinned = {k: v for k, v in self.options.items() if k in CASE_SETTINGS}
        if self.action == "search":
            engines = pinned.get("search_engines", ("google",))
            if isinstance(engines, str):  # pinned on the command line: "google,bing"
                engines = [e.strip() for e in engines.split(",") if e.strip()]
            pinned["search_engines"] = tuple(engines)
        return pinned

    @property
    def read_top(self) -> int:
        return int(self.options.get("read_top", 0))


def load_case(folder: Path) -> Case:
    """Read `folder/action.json`; a clear error when the folder is not a recording."""
    spec_path = folder / "action.json"
    try:
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StreamBrowserError(
            f"{folder} is not a recording: {spec_path.name} is missing or not JSON",
            hint="make one with `make record` or scripts/make_recording.py, or delete the folder",
        ) from exc
    action, options = spec.get("action"), dict(spec.get("options") or {})
    unknown = sorted(set(options) - set(CASE_SETTINGS) - set(ACTION_OPTIONS))
    if action not in ACTIONS or unknown or not (folder / "session.har").is_file():
        raise StreamBrowserError(
            f"{spec_path}: action {action!r}, unknown options {unknown}, "
            f"HAR present: {(folder / 'session.har').is_file()}",
            hint=f"action is one of {', '.join(ACTIONS)}; options are "
            f"{', '.join(CASE_SETTINGS + ACTION_OPTIONS)}; session.har must be beside it",
        )
    return Case(folder, str(action), str(spec.get("arg", "")), options)


def case_folders(root: Path = RECORDINGS_DIR) -> list[Path]:
    """Every folder under `root` (each one is a test case), in name order."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def case_options(
    settings: Settings, action: str, read_top: int = 0, *, arg: str = ""
) -> dict[str, Any]:
    """The options a new recording pins: Google language and region (as resolved for `arg`
    when `SB_GOOGLE_HL=auto`, so the replay asks for the recorded URL), and `read_top`."""
    options: dict[str, Any] = {}
    if action in ("search", "play"):
        hl, gl = google_locale(
            arg, settings.google_hl, settings.google_gl, settings.google_hl_fallback
        )
        options |= {"google_hl": hl, "google_gl": gl, "google_udm14": settings.google_udm14}
    if action == "search":
        options["search_engines"] = list(settings.search_engines)
    if read_top:
        options["read_top"] = read_top
    return options


def write_case(
    folder: Path, action: str, arg: str, options: dict[str, Any], provenance: str
) -> Case:
    """Write action.json and README.md (the HAR is written by the recorder)."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = {"action": action, "arg": arg, "options": options}
    (folder / "action.json").write_text(
        json.dumps(spec, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    pinned = ", ".join(f"{k}={v}" for k, v in options.items()) or "defaults"
    readme = (
        f"# {folder.name}\n\n`{action}` {json.dumps(arg, ensure_ascii=False)} ({pinned})\n\n"
        f"Provenance: {provenance}\n\nFiles: `session.har` (the network, scrubbed), "
        "`action.json`, `expected.json` (the action's `--json` output when replayed).\n"
        "Refresh `expected.json` with `make update-recordings`; see docs/debugging.md.\n"
    )
    (folder / "README.md").write_text(readme, encoding="utf-8")
    return Case(folder, action, arg, options)


def write_expected(case: Case, payload: dict[str, Any]) -> None:
    text = json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
    case.expected_path.write_text(text, encoding="utf-8")


async def run_case(
    case: Case,
    base: Settings,
    *,
    trace_path: Path | None = None,
    keep_trace: Callable[[dict[str, Any]], bool] | None = None,
    close_tab: bool = False,
) -> dict[str, Any]:
    """Replay `case` through the real browser path; its payload (or its error payload).

    With `trace_path` a Playwright trace is recorded and kept when `keep_trace(payload)` says
    so (always, without a predicate).
    """
    settings = case.settings_for(base)
    recorder = SessionRecorder(trace_path=trace_path, title=case.name) if trace_path else None
    hooks = [replay_hook(str(case.har))] + ([recorder.hook] if recorder else [])
    driver = Driver(settings, page_hooks=tuple(hooks))
    payload: dict[str, Any] = {}
    try:
        try:
            payload = (
                await run_action(driver, case.action, case.arg, settings, read_top=case.read_top)
            ).payload
        except StreamBrowserError as exc:
            payload = error_payload(exc)
        if recorder is not None:
            await recorder.stop(keep_trace=keep_trace(payload) if keep_trace else True)
    finally:
        if close_tab:
            await driver.close_owned_tab()
        await driver.close()
    return payload


# -- replaying a recording from the command line ----------------------------------------------

# Command-line flags that override a recording's pinned options (flag -> setting).
OPTION_FLAGS = {"hl": "google_hl", "gl": "google_gl", "web": "google_udm14"}


@dataclass(frozen=True)
class ReplayPlan:
    """What `--replay NAME` means for one command: the settings to run with (the recording's
    options, command-line flags on top), and a note when the command differs from the
    recorded one (a request the recording never saw is aborted)."""

    settings: Settings
    case: Case | None
    note: str | None = None


def flag_overrides(args: Any) -> dict[str, Any]:
    """The settings the command line names explicitly (`--hl`, `--gl`, `--web`/`--no-web`)."""
    values = {OPTION_FLAGS[flag]: getattr(args, flag, None) for flag in OPTION_FLAGS}
    return {key: value for key, value in values.items() if value is not None}


def replay_plan(
    name_or_har: str,
    settings: Settings,
    *,
    action: str | None,
    arg: str | None,
    overrides: dict[str, Any] | None = None,
) -> ReplayPlan:
    """Settings for replaying `name_or_har`: its recorded options unless `overrides` name
    them. A bare HAR (no action.json beside it) keeps `settings` as they are."""
    overrides = overrides or {}
    folder = resolve_har(name_or_har).parent
    if not (folder / "action.json").is_file():
        return ReplayPlan(settings.model_copy(update=overrides), None)
    case = load_case(folder)
    pinned = {k: v for k, v in case.pinned().items() if k not in overrides}
    planned = settings.model_copy(update={**pinned, **overrides})
    log.info("replay.options", recording=case.name, pinned=pinned, overrides=overrides)
    return ReplayPlan(planned, case, _mismatch_note(case, action, arg))


def _mismatch_note(case: Case, action: str | None, arg: str | None) -> str | None:
    same_action = action is None or action == case.action
    if same_action and (arg is None or arg.strip() == case.arg.strip()):
        return None
    asked = f"{action or 'this command'} {json.dumps(arg, ensure_ascii=False)}"
    recorded = f"{case.action} {json.dumps(case.arg, ensure_ascii=False)}"
    return (
        f"recording {case.name!r} was made for `{recorded}`, not `{asked}`: requests it "
        f"never saw are aborted (replay it with: stream-browser {recorded} --replay {case.name})"
    )


# -- comparing on stable fields ---------------------------------------------------------------


def _stable_read(read: dict[str, Any]) -> dict[str, Any]:
    return {k: read.get(k) for k in ("outcome", "status", "final_url", "title")}


def _data(payload: dict[str, Any]) -> dict[str, Any]:
    result = payload.get("result")
    return dict(result.get("data") or {}) if isinstance(result, dict) else {}


def stable_view(action: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The fields a replay must reproduce exactly (text is compared by overlap instead): who
    answered, every hop's outcome, and the action's own facts."""
    if "error" in payload:
        return {"error": payload["error"].get("kind")}
    result = payload.get("result")
    view: dict[str, Any] = {
        "hops": [[h.get("provider"), h.get("failure_kind")] for h in payload.get("chain", [])],
    }
    if not isinstance(result, dict):
        return view
    view |= {k: result.get(k) for k in ("success", "failure_kind", "provider")}
    data = _data(payload)
    if action == "search":
        view["results"] = [{k: r.get(k) for k in ("rank", "title", "url")} for r in data["results"]]
        view["reads"] = [_stable_read(r) for r in data.get("reads", [])]
        health = (data.get("health") or {}).get("state")
        if health == "suspect":  # pinned when suspect: the fix that makes it ok shows here
            view["health"] = health
            view["generic"] = [r.get("url") for r in data.get("generic", [])]
    elif action == "read":
        view |= _stable_read(data)
    else:
        view |= {k: data.get(k) for k in ("video_id", "url", "playing")}
    return view


def _texts(action: str, payload: dict[str, Any]) -> list[str]:
    data = _data(payload)
    if action == "read":
        return [str(data.get("text", ""))]
    if action == "search":
        return [str(r.get("text", "")) for r in data.get("reads", [])]
    return []


def text_overlap(a: str, b: str) -> float:
    """Shared words over the longer text's words (1.0 for two empty texts)."""
    left, right = Counter(a.split()), Counter(b.split())
    longest = max(sum(left.values()), sum(right.values()))
    return 1.0 if longest == 0 else sum((left & right).values()) / longest


def compare(
    action: str,
    expected: dict[str, Any],
    actual: dict[str, Any],
    threshold: float = TEXT_OVERLAP_MIN,
) -> list[str]:
    """Readable differences between two outputs of the same case; empty when they agree."""
    problems: list[str] = []
    want, got = stable_view(action, expected), stable_view(action, actual)
    if want != got:
        diff = difflib.unified_diff(
            json.dumps(want, ensure_ascii=False, indent=1).splitlines(),
            json.dumps(got, ensure_ascii=False, indent=1).splitlines(),
            "expected.json",
            "replayed",
            lineterm="",
            n=2,
        )
        problems.append("stable fields differ:\n" + "\n".join(diff))
    for index, (old, new) in enumerate(
        zip(_texts(action, expected), _texts(action, actual), strict=False)
    ):
        overlap = text_overlap(old, new)
        if overlap < threshold:
            problems.append(
                f"text {index}: word overlap {overlap:.2f} < {threshold:.2f} "
                f"(expected {len(old.split())} words, got {len(new.split())}; "
                f"got starts {new[:120]!r})"
            )
    return problems


def summarize_change(action: str, old: dict[str, Any], new: dict[str, Any]) -> str:
    """One line for update_recordings: "new", "unchanged", "unstable fields only" or what
    changed on the stable fields."""
    if not old:
        return "new"
    problems = compare(action, old, new, threshold=0.999)
    if not problems:
        return "unchanged" if old == new else "unstable fields only"
    a, b = stable_view(action, old), stable_view(action, new)
    parts = [
        f"{key}: {_change(a.get(key), b.get(key))}"
        for key in sorted(set(a) | set(b))
        if a.get(key) != b.get(key)
    ]
    if any(p.startswith("text") for p in problems):
        parts.append("text changed")
    return "changed (" + "; ".join(parts) + ")"


def _change(old: Any, new: Any) -> str:
    if isinstance(old, list) and isinstance(new, list):
        shared = min(len(old), len(new))
        differ = sum(1 for x, y in zip(old, new, strict=False) if x != y)
        return f"{len(old)} -> {len(new)} items, {differ} of the first {shared} differ"
    before, after = (json.dumps(v, ensure_ascii=False)[:60] for v in (old, new))
    return f"{before} -> {after}"
