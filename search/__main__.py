"""`python -m search` is the same command as `stream-browser`."""

import sys

from search.cli import main

sys.exit(main())
