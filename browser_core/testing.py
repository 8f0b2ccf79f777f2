"""Helpers for tests and benchmarks (never needed by the brain or the service)."""

from ._chrome import free_port

__all__ = ["free_port"]
