"""What every `modelstream` command shares, below the commands and the CLI that runs them: the
exit statuses and `UsageError` (`exit_status`), and the help pages' formatting (`helptext`).
A command imports these, never the CLI (docs/architecture.md)."""
