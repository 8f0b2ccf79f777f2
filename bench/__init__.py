"""Benchmarks, soak and their helpers; not part of the product. One package per figure:
`warm` (`make bench`), `answers` (`make bench-answers`), `extract` (`make bench-extract`),
`egress` (the egress guard's cost), `stage` (its cost, `make screens`, consent), `soak`
(`make soak`); `_common` holds what more than one of them uses. bench/README.md has the table.
"""
