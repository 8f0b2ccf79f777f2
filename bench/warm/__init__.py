"""The warm path against Node and bare Playwright (`make bench`)."""
