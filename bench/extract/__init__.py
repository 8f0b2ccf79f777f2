"""`make bench-extract` (`python -m bench.extract`): the read path's article extraction
(`extract_article`) against plain `trafilatura.extract`, on pages with ground truth.

Headline: the shingle F1 (scrapinghub's metric) and ROUGE-LSum F1 of both extractors, per set
and cross-validated over the development pages, then the extraction time per page.
`articles.py` runs it; `serp.py` (`python -m bench.extract.serp tests/fixtures/serp`) checks the
Google results parser against the saved pages' ground truth (organic URL recall/precision).
"""
