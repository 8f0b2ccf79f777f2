"""The stream-safety layer: what keeps a hostile page from reaching the brain or the audience.

`_policy` decides which URLs and addresses are internal (WHATWG parsing, as Chrome reads them);
`_egress` is the SOCKS5 guard process Chrome is started behind, checking every connection after
name resolution; `_fetch_guard` refuses internal requests over CDP before they are sent;
`_envelope` wraps web text for the brain as untrusted, after `_lookalike` (with the TR39 table in
`_confusables`) has neutralised anything that could forge the envelope's markers. The public
names are re-exported by `browser_core`.
"""

from ._egress import EgressGuard

__all__ = ["EgressGuard"]  # the guard itself, for benchmarks that time it step by step
