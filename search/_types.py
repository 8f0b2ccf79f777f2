"""The request and context types of the brain-facing tool, and the provider seam."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from browser_core import Answer, Deadline, Settings

Action = Literal["search", "read", "play", "pause", "resume", "stop", "status"]


@dataclass(frozen=True)
class ActionSpec:
    """One action of the tool, declared once: every face (library, CLI, service, MCP) and
    the LLM declaration are built from `ACTION_SPECS`."""

    name: Action
    summary: str
    needs_query: bool = True
    control: bool = False  # a playback control: acts on what plays, never navigates to search


ACTION_SPECS: tuple[ActionSpec, ...] = (
    ActionSpec("search", "web search"),
    ActionSpec("read", "open `url` and read its text"),
    ActionSpec("play", "play a YouTube video (query or YouTube URL) on the stream"),
    ActionSpec("pause", "pause the video on the stream", needs_query=False, control=True),
    ActionSpec(
        "resume",
        "resume the paused video where it stopped (also after a search or read paused it)",
        needs_query=False,
        control=True,
    ),
    ActionSpec("stop", "stop the video and leave a neutral page", needs_query=False, control=True),
    ActionSpec("status", "say what is playing on the stream", needs_query=False, control=True),
)
SPECS: dict[str, ActionSpec] = {spec.name: spec for spec in ACTION_SPECS}
ACTIONS: tuple[str, ...] = ("auto", *SPECS)
CONTROLS: frozenset[str] = frozenset(spec.name for spec in ACTION_SPECS if spec.control)
# The search engines a call may ask for by name (the on-screen search; see `_routing`).
ENGINE_NAMES: tuple[str, ...] = ("google", "bing")


@dataclass(frozen=True)
class ToolContext:
    """What the brain tells us per request. `broadcasting=None` means "no signal"."""

    broadcasting: bool | None = None
    request_id: str | None = None


@dataclass(frozen=True)
class Request:
    """One resolved request: the action is never "auto" here."""

    action: Action
    query: str
    url: str | None = None
    read_top: int = 0
    options: dict[str, str] = field(default_factory=dict)
    engine: str | None = None  # the search engine the brain asked for (None: the setting's)


class Provider(Protocol):
    """A source of answers. Return what was found (the tool wraps it in the envelope); raise
    a `browser_core.ProviderError` leaf when there is nothing."""

    name: str
    actions: frozenset[str]

    async def run(self, request: Request, settings: Settings, deadline: Deadline) -> Answer: ...
