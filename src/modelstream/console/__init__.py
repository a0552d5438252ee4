"""What every `modelstream` command shares, below the commands and the CLI that runs them: the
exit statuses and `UsageError` (`exit_status`), the help pages' formatting (`helptext`), the
parser that names an unknown flag (`command_line`), counts with their nouns (`counts`) and the
line a command says when an optional extra is missing (`extras`). A command imports these,
never the CLI (docs/architecture.md)."""
