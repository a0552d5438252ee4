"""`Secret`: a credential that never shows itself in a repr, a str, a log line or an error, and
`mask_secret`, the one rule for masking a credential that a provider or a model echoed in text.

The rule: a secret is replaced where it stands as a whole token (no letter or digit right
before or after it: not inside a longer word) and only when it is at least `MIN_MASKED_LENGTH`
characters long. Punctuation is a boundary, `-` and `_` included, so a key glued to a suffix
(`<key>-session`) is still masked.

A short "key" (`api_key="ollama"` for a local server) is a common word, and masking it would
garble honest text ("try `ollama pull llama3.2`"); it is never echoed by this library, which
never writes a key into a message, a repr or a result in the first place.
"""

from __future__ import annotations

MIN_MASKED_LENGTH = 8
MASK = "***"
# Written by hand: `str.replace` has no notion of a word, and a `\b` regex would need each key
# escaped and compiled (and cached, keeping keys alive in a global).


def mask_secret(text: str, secret: str, mask: str = MASK) -> str:
    """`text` with each whole-token occurrence of `secret` replaced by `mask`; unchanged when
    `secret` is shorter than `MIN_MASKED_LENGTH`."""
    if len(secret) < MIN_MASKED_LENGTH or secret not in text:
        return text
    # an edge of the secret that is itself punctuation (a base64 `=`) is a boundary already
    check_before = secret[0].isalnum()
    check_after = secret[-1].isalnum()
    pieces: list[str] = []
    kept = 0  # text[kept:] is not copied yet
    found = text.find(secret)
    while found != -1:
        end = found + len(secret)
        whole = not (check_before and found > 0 and text[found - 1].isalnum()) and not (
            check_after and end < len(text) and text[end].isalnum()
        )
        if whole:
            pieces += (text[kept:found], mask)
            kept = end
            found = text.find(secret, end)
        else:
            found = text.find(secret, found + 1)
    if not pieces:
        return text
    pieces.append(text[kept:])
    return "".join(pieces)


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
        """`text` with the key masked where a provider echoed it (`mask_secret`)."""
        return mask_secret(text, self._value) if self._value else text

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__
