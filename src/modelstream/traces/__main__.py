"""`python -m modelstream.traces serve|list ...`, the same as `modelstream traces ...`."""

import sys

from .command import main

sys.exit(main())
