"""`python -m bench.egress`: runs `bench.egress.cost`."""

import sys

from bench.egress.cost import main

sys.exit(main())
