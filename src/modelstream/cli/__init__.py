"""The `modelstream` command: replay recorded response bodies and check event files.

A thin IO shell over the sans-IO core: it reads files, drives `StreamDecoder` and
`GrammarChecker`, and prints. The entry point is `modelstream.cli.main:main` (not imported
here, so `python -m modelstream.cli.main` runs the module once). See docs/cli.md.
"""
