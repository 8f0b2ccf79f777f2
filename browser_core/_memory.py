"""Keeping a days-long broadcast's memory flat: ours and the Playwright driver's.

Two measured sources of growth that never came back (see docs/performance.md, "Soak"):
- Python: every read and search allocates and frees multi-megabyte buffers (page bodies,
  parse trees) on several threads; glibc keeps the freed pages in its arenas, so RSS only
  grows. `trim_heap()` hands free pages back to the system (`malloc_trim`, about 0.02 ms).
- The Playwright driver (Node): V8's young generation grows to its maximum under the
  traffic of large page bodies and stays there. `driver_node_options()` starts the driver
  with a small young generation (more frequent, cheaper scavenges; no measured slowdown).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import sys
from collections.abc import Iterator
from functools import cache

__all__ = ["DRIVER_NODE_FLAGS", "driver_node_options", "trim_heap"]

# V8 flags for the Playwright driver process; a NODE_OPTIONS the host set wins.
DRIVER_NODE_FLAGS = ("--max-semi-space-size=2",)


@cache
def _malloc_trim() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None)
    except OSError:
        return None


def trim_heap() -> None:
    """Return freed heap pages to the system (glibc only; a no-op elsewhere)."""
    trim = _malloc_trim()
    if callable(trim):
        trim(0)


@contextlib.contextmanager
def driver_node_options() -> Iterator[None]:
    """While the Playwright driver starts, add DRIVER_NODE_FLAGS to its NODE_OPTIONS (the
    driver copies the environment when it is spawned; it is restored right after)."""
    saved = os.environ.get("NODE_OPTIONS")
    present = saved or ""
    extra = [flag for flag in DRIVER_NODE_FLAGS if flag.split("=")[0] not in present]
    if extra:
        os.environ["NODE_OPTIONS"] = " ".join([present, *extra]).strip()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("NODE_OPTIONS", None)
        else:
            os.environ["NODE_OPTIONS"] = saved
