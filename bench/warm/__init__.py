"""`make bench` (`python -m bench.warm`): the warm in-process tool against the Node process per
query it replaces and bare Playwright, on the same saved pages of one local Chromium.

Headline: `speedup-heavy` and `speedup-light` (the Node row's median over the warm tool's; targets
> 1 and >= 5) and `overhead-heavy`, `overhead-light` (the warm tool's median over the
bare-Playwright floor's; target <= 1.1). `bench.py` runs the rows; `_layers` takes the warm
path apart layer by layer; the egress and stage sections come from `bench.egress`, `bench.stage`.
"""
