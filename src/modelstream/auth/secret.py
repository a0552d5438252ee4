"""`Secret`: a credential that never shows itself in a repr, a str, a log line or an error."""

from __future__ import annotations


class Secret:
    """A credential (API key, token, AWS secret key) that never shows itself in a repr, a str,
    a log line or an error."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The value itself, for the one place that needs it: the signer."""
        return self._value

    def redact(self, text: str) -> str:
        """`text` with every occurrence of the key masked (provider messages may echo it)."""
        return text.replace(self._value, "***") if self._value else text

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__
