"""`make soak` (`python -m bench.soak`, `make soak OPS=5000` for the long one): hundreds of mixed
operations (search, read, play, stop) through the real tool on locally served pages.

Headline: failures and leaked tabs (either makes the exit code 1) and our memory's growth
(target < 50 MB); for a long soak, the growth after the first thousand operations (target
< 20 MB). `soak.py` runs it.
"""
