"""Recording and replaying the broadcast tab's sessions: developer tooling for
`stream-browser record`, `debug`, `--replay` and the recorded-session regression tests.

Not part of what the brain needs; kept out of `browser_core`'s top-level surface.
"""

from ._recording import (
    SessionRecorder,
    document_entry,
    highlight,
    highlight_inputs,
    slow_motion,
    step_timer,
)
from ._replay import RECORDINGS_DIR, recordings_dir, replay_hook, resolve_har

__all__ = [
    "RECORDINGS_DIR",
    "SessionRecorder",
    "document_entry",
    "highlight",
    "highlight_inputs",
    "recordings_dir",
    "replay_hook",
    "resolve_har",
    "slow_motion",
    "step_timer",
]
