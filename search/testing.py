"""A fake provider shipped beside the `Provider` seam, for tests of routing and the tool."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from browser_core import (
    Answer,
    Deadline,
    ProviderError,
    Settings,
    Source,
)
from search._types import SPECS, Request


@dataclass
class FakeProvider:
    """Answers, fails with a failure kind, crashes, or sleeps, as told; records its calls.

    `behaviour`: "ok", "fail:KIND", "crash", or "sleep:SECONDS" (then answers).
    """

    name: str
    actions: frozenset[str] = frozenset(SPECS)
    behaviour: str = "ok"
    body: str = "fake answer"
    calls: list[Request] = field(default_factory=list)

    async def run(self, request: Request, settings: Settings, deadline: Deadline) -> Answer:
        self.calls.append(request)
        kind, _, arg = self.behaviour.partition(":")
        if kind == "fail":
            raise ProviderError(
                f"{self.name} failed on purpose", failure_kind=arg or "provider-error"
            )
        if kind == "crash":
            raise RuntimeError(f"{self.name} crashed on purpose")
        if kind == "sleep":
            await asyncio.sleep(float(arg))
        return Answer(
            f"{self.body} from {self.name} for {request.query}",
            [Source(title="fake", url=f"https://example.com/{self.name}")],
        )
