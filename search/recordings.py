"""Recorded sessions as regression cases: the public face of `search._recordings` for the
scripts that make and refresh them (`scripts/make_recording.py`, `scripts/update_recordings.py`)."""

from ._recordings import (
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
