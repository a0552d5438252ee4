"""The exit statuses every `modelstream` command shares."""

EXIT_OK = 0  # the stream stopped, or the file follows the grammar
EXIT_FAILED = 1  # the stream ended in an error, or the file breaks a rule
EXIT_USAGE = 2  # bad usage or configuration: one line on stderr says what to do
EXIT_INTERRUPTED = 128 + 2  # Ctrl-C (SIGINT), as a shell reports it
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a process ended by SIGPIPE


class UsageError(Exception):
    """Bad usage: the message says what to do; the command exits with `EXIT_USAGE`."""
