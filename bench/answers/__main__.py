"""`python -m bench.answers`: runs `bench.answers.answers`."""

import sys

from bench.answers.answers import main

sys.exit(main())
