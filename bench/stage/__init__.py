"""The stage (browser_core/stage: the highlight, the marked result, theater mode, the caption)
measured and looked at.

- `cost.py`: a section of `make bench`; headline: per action, how long the answer waited on the
  stage (capped at 100 ms by design), how long the tab stayed held after it, and the median
  with the stage less the median without it.
- `screens.py`: `make screens` (`python -m bench.stage.screens`): a PNG of the broadcast screen
  after each action, offline from the recordings; the headline is the pictures.
- `consent.py`, `consent_heuristic.py` (`python -m bench.stage.consent`, `...consent_heuristic`):
  what answering consent banners costs a navigation, and whether autoconsent's heuristic
  mode would earn a place (docs/screen-consent-fonts.md).
"""
