"""`python -m modelstream` runs the command-line tool."""

from .cli.main import main

raise SystemExit(main())
