"""Helpers for tests and benchmarks (never needed by the brain or the service): the launch
switches and pinned preferences a bench compares Chromiums by, the egress guard's parts a
bench proxy reuses, the consent controller of a page, the driver's recycle period."""

from .chrome import (
    LOCAL_STATE_PREFS,
    SCREEN_PREFS,
    egress_args,
    free_port,
    is_credential_name,
)
from .chrome._process import keep as keep_env
from .driver._connection import RECYCLE_OPS
from .safety._egress import REP_HOST_UNREACHABLE, EgressGuard, Refused, normal_host
from .stage._consent import controller_for

__all__ = [
    "LOCAL_STATE_PREFS",
    "RECYCLE_OPS",
    "REP_HOST_UNREACHABLE",
    "SCREEN_PREFS",
    "EgressGuard",
    "Refused",
    "controller_for",
    "egress_args",
    "free_port",
    "is_credential_name",
    "keep_env",
    "normal_host",
]
