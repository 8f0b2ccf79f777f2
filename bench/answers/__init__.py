"""`make bench-answers` (`python -m bench.answers`): does a read that carries the question hand
the brain the answer?

Headline: per language and budget (6,000 and 1,500 characters), the share of questions whose
answer, in a few characters of its own context, is in what the brain gets, for the opening,
plain BM25 and the new read. `answers.py` runs it; `_data` reads the question sets, `_pages`
builds the pages, `_eval` the readers, `_cv` cross-validates (--folds), `_service` reads a
sample through `stream-browser serve` (--service).
"""
