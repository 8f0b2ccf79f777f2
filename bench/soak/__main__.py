"""`python -m bench.soak`: runs `bench.soak.soak`."""

import sys

from bench.soak.soak import main

sys.exit(main())
