"""`python -m bench.warm`: runs `bench.warm.bench`."""

import sys

from bench.warm.bench import main

sys.exit(main())
