"""Helpers more than one bench package (and the tests) use: `serve` (saved pages from a local
HTTPS server, behind Chromium's resolver rules), `stage` (that server, one Chromium of our own,
settings pointing at both), `fixtures` (which saved pages), `workloads` (the Google search and
the article read on the stage, and the bare-Playwright floor row), `display` (an Xvfb display
whose whole screen can be read). No `make` target of its own.
"""
