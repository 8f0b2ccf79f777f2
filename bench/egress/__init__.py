"""What the egress guard costs, taken apart: a section of `make bench`, or alone in minutes with
`python -m bench.egress [--rounds 30] [--arms guard,bare,control,socks,unchecked,stage]`.

Headline: each arm's median goto + content against the same launch without the guard (the
`bare` arm), as a ratio; the control arm shows what two identical Chromiums differ by.
`cost.py` runs it; `_arms` starts the Chromiums, `_socks` the comparison's SOCKS5 servers (run as
`python -m bench.egress._socks`), `_phases` times one connection through the guard step by step.
"""
