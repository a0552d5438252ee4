"""`python -m modelstream.server --config FILE`: `modelstream serve` on its own."""

import sys

from ..serving.command import main

sys.exit(main())
