"""Recorded sessions as regression cases: the public face of `search.recordings._runner` for the
scripts that make and refresh them (`scripts/make_recording.py`, `scripts/update_recordings.py`)."""

from ._runner import (
    ACTION_OPTIONS,
    ACTIONS,
    CASE_SETTINGS,
    Case,
    case_folders,
    case_options,
    compare,
    error_payload,
    load_case,
    run_action,
    run_case,
    summarize_change,
    write_case,
    write_expected,
)

__all__ = [
    "ACTIONS",
    "ACTION_OPTIONS",
    "CASE_SETTINGS",
    "Case",
    "case_folders",
    "case_options",
    "compare",
    "error_payload",
    "load_case",
    "run_action",
    "run_case",
    "summarize_change",
    "write_case",
    "write_expected",
]
