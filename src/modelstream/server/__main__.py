"""`python -m modelstream.server --config FILE`: `modelstream serve` on its own."""

import sys

from .command import main

sys.exit(main())
