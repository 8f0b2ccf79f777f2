"""`python -m bench.extract`: runs `bench.extract.articles`."""

import sys

from bench.extract.articles import main

sys.exit(main())
