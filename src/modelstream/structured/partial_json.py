"""An incremental JSON parser that shows the value as it grows (sans-IO, stdlib only).

A model streams a JSON answer in small text fragments. `PartialJSON` is fed them one at a time
and keeps one value that it grows in place: after each `feed` the caller reads `value` (the same
object every time, O(1)) and sees every key, element and half-written string seen so far.
Nothing is parsed twice: the parser keeps a stack of the open containers and holds back only
what cannot be shown yet (a number or literal still being written, an escape cut in two), so
the total work is linear in the text.

What the value shows, and why:

- a key appears once its string is complete and its value has started: a half-written key
  would be a key the final value does not have;
- an array element appears once it has started;
- a string grows as it is written, escapes decoded; an escape cut across fragments (a `\\uXXXX`,
  a surrogate pair) is held back until complete, so no broken character is ever shown;
- a number, `true`, `false` or `null` is shown only when complete (`-`, `1.`, `1e` are not
  numbers, and `12` may still become `123`): a number is complete when a delimiter follows it
  (or at `finish()` for a top-level number), so its key appears only then.

Every shown value is therefore a prefix of the final one: a container's keys and elements are a
prefix of the final ones, each complete but the last, and the last is a prefix of its final
value. The first character that cannot be JSON raises `PartialJSONError` with its offset.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["MAX_DEPTH", "NOTHING", "PartialJSON", "PartialJSONError"]

Path = tuple[str | int, ...]

MAX_DEPTH: Final = 256  # containers open at once: deeper input is refused, not a recursion crash


class _Nothing:
    """The type of `NOTHING`: a value no JSON text can produce."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOTHING"

    def __copy__(self) -> _Nothing:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Nothing:
        return self

    def __reduce__(self) -> str:
        return "NOTHING"


NOTHING: Final[Any] = _Nothing()
"""`PartialJSON.value` before any value has started (None is a JSON value, so it cannot say it)."""


class PartialJSONError(ValueError):
    """The text cannot be JSON: `offset` is the first character that cannot (counted from the
    start of all the text fed), `reason` says why in a few words."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(f"{reason} at offset {offset}")
        self.offset = offset
        self.reason = reason


# The states of the parser: what the next character may be.
_VALUE: Final = 0  # a value (top level, after `:`, after `,` in an array)
_FIRST: Final = 1  # after `[`: a value or `]`
_OBJ_FIRST: Final = 2  # after `{`: a key or `}`
_OBJ_KEY: Final = 3  # after `,` in an object: a key
_KEY: Final = 4  # inside a key string
_COLON: Final = 5  # after a key: `:`
_STRING: Final = 6  # inside a value string
_AFTER: Final = 7  # after a value in a container: `,` or the container's close
_DONE: Final = 8  # after the top-level value: whitespace only
_IN_STRING: Final = (_STRING, _KEY)
_AT_VALUE: Final = (_VALUE, _FIRST)
_AT_KEY: Final = (_OBJ_KEY, _OBJ_FIRST)

_WS = re.compile(r"[ \t\n\r]*")
_WS_CHARS: Final = " \t\n\r"
_RUN = re.compile(
    r'[^"\\\x00-\x1f]*'
)  # the plain characters of a string, up to `"`, `\` or a control
# Every prefix of a JSON number (the empty one too): `-`, `1.`, `1e+` are prefixes, `01`, `1.e` not.
_NUMBER_PREFIX = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.(?:[0-9]+(?:[eE][+-]?[0-9]*)?)?|[eE][+-]?[0-9]*)?)?"
)
_NUMBER_END: Final = ",]} \t\n\r"  # what may follow a number inside a container
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
# What may follow a high surrogate's escape and still become its low surrogate's `\uDC00`-`\uDFFF`.
_LOW_PREFIX = re.compile(r"\\(?:u(?:[dD](?:[c-fC-F][0-9a-fA-F]{0,2})?)?)?")
_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_LITERALS: Final[dict[str, tuple[str, Any]]] = {
    "t": ("true", True),
    "f": ("false", False),
    "n": ("null", None),
}
_NUMBER_START: Final = frozenset("-0123456789")


class PartialJSON:
    """Fed a JSON text fragment by fragment; `value` is the value so far, grown in place.

    `feed` says whether the shown value changed; `open_path` is where the text is being written;
    `completed()` names the values the last fragment finished (so a consumer can hand on each
    element of a list once, when it is complete); `finish()` ends the input.
    """

    __slots__ = (
        "_base",
        "_completed",
        "_error",
        "_finished",
        "_key",
        "_keybuf",
        "_paths",
        "_pending",
        "_root",
        "_stack",
        "_state",
        "_top",
        "_top_is_obj",
    )

    def __init__(self) -> None:
        self._root: Any = NOTHING
        self._state = _VALUE
        self._stack: list[Any] = []  # the open containers (dicts and lists), outermost first
        self._paths: list[Path] = []  # the path of each open container
        self._top: Any = None  # the innermost open container (a dict or a list), None at the top
        self._top_is_obj = False
        self._key = ""  # the key whose value is being written in the innermost object
        self._keybuf = ""  # the key being read
        self._pending = ""  # text held back: a number, literal or escape not complete yet
        self._base = 0  # the offset of the first character not yet consumed (pending included)
        self._completed: list[Path] = []
        self._error: PartialJSONError | None = None
        self._finished = False

    # --- reading ------------------------------------------------------------------------------

    @property
    def value(self) -> Any:
        """The value so far (`NOTHING` before one starts): the same object after every feed,
        its dicts and lists grown in place and its open string replaced by a longer one."""
        return self._root

    @property
    def done(self) -> bool:
        """The top-level value is complete (only whitespace may follow)."""
        return self._state == _DONE

    @property
    def open_path(self) -> Path | None:
        """The path from the root to the value being written now, None once the top-level
        value is complete. Every container on it, and the value at its end, is incomplete;
        every value shown that is not on it is complete. A number or literal still being
        written is not shown, so the path then ends at its container."""
        if self._state == _DONE:
            return None
        top = self._top
        if top is None:
            return ()
        path = self._paths[-1]
        if self._state == _STRING:
            return (*path, self._key if self._top_is_obj else len(top) - 1)
        return path

    def is_complete(self, path: Path) -> bool:
        """Whether the value at `path` is shown and will not change any more: present, and not
        on the open path."""
        node = self._root
        if node is NOTHING:
            return False
        for step in path:
            if isinstance(node, dict) and isinstance(step, str):
                if step not in node:
                    return False
            elif isinstance(node, list) and type(step) is int:
                if not 0 <= step < len(node):
                    return False
            else:
                return False
            node = node[step]
        open_path = self.open_path
        return open_path is None or open_path[: len(path)] != path

    def completed(self) -> list[Path]:
        """The paths of the values the last `feed` (or `finish`) completed, inner before outer,
        in the order they completed (a list's elements in index order, each once). A new list at
        every feed, so keeping it costs one small list per fragment."""
        return self._completed

    # --- feeding ------------------------------------------------------------------------------

    def feed(self, text: str) -> bool:
        """Consume the next fragment; True when the shown value changed (a key or element
        appeared, a string grew, a number or literal completed; a repeated key replacing its
        value counts too). Raises `PartialJSONError` at the first character that cannot be JSON
        (and again at every later call)."""
        if self._error is not None:
            raise self._error
        completions: list[Path] = []
        self._completed = completions
        if not text:
            return False
        if self._finished:
            raise self._fail(self._base, "feed after finish()")
        if self._pending:
            text = self._pending + text
            self._pending = ""
        n = len(text)
        pos = 0
        st = self._state
        changed = False
        ws = _WS.match
        run = _RUN.match
        while pos < n:
            c = text[pos]
            if st in _IN_STRING:
                m = run(text, pos)  # always matches (maybe empty)
                end = m.end() if m else pos
                if end < n and text[end] == '"':
                    piece = text[pos:end]
                    pos = end + 1
                    closed = True
                elif end == n:
                    piece = text[pos:] if pos else text
                    pos = n
                    closed = False
                else:
                    piece, pos, closed = self._scan(text, pos)
                if st == _STRING:
                    if piece:
                        self._append(piece)
                        changed = True
                    if not closed:
                        break  # at the end, or an escape to hold back from pos
                    top = self._top
                    if top is None:
                        completions.append(())
                        st = _DONE
                    else:
                        completions.append(
                            (*self._paths[-1], self._key if self._top_is_obj else len(top) - 1)
                        )
                        st = _AFTER
                else:
                    if piece:
                        self._keybuf += piece
                    if not closed:
                        break
                    self._key = self._keybuf
                    self._keybuf = ""
                    st = _COLON
                continue
            if c in _WS_CHARS:
                m = ws(text, pos)
                pos = m.end() if m else pos + 1
                continue
            if st == _AFTER:
                if c == ",":
                    st = _OBJ_KEY if self._top_is_obj else _VALUE
                    pos += 1
                elif c == ("}" if self._top_is_obj else "]"):
                    completions.append(self._pop())
                    st = _AFTER if self._stack else _DONE
                    pos += 1
                else:
                    expected = "',' or '}'" if self._top_is_obj else "',' or ']'"
                    raise self._fail(self._base + pos, f"expected {expected}")
            elif st in _AT_VALUE:
                if c == '"':
                    self._place("")
                    changed = True
                    st = _STRING
                    pos += 1
                elif c in _NUMBER_START:
                    m = _NUMBER_PREFIX.match(text, pos)
                    end = m.end() if m else pos
                    if end == n:
                        break  # the number may go on: hold it back
                    token = text[pos:end]
                    if text[end] not in _NUMBER_END or not token[-1].isdigit():
                        reason = "invalid number" if token[-1].isdigit() else "incomplete number"
                        raise self._fail(self._base + end, reason)
                    self._place(self._number(token, pos))
                    changed = True
                    st = self._scalar_done(completions)
                    pos = end
                elif c == "{" or c == "[":
                    container: dict[str, Any] | list[Any] = {} if c == "{" else []
                    self._push(container, pos)
                    changed = True
                    st = _OBJ_FIRST if c == "{" else _FIRST
                    pos += 1
                elif c in _LITERALS:
                    word, literal = _LITERALS[c]
                    end = pos + len(word)
                    if text[pos:end] != word:
                        for i, char in enumerate(text[pos:end]):
                            if char != word[i]:
                                raise self._fail(self._base + pos + i, f"invalid literal ({word}?)")
                        break  # a prefix of the literal: hold it back
                    self._place(literal)
                    changed = True
                    st = self._scalar_done(completions)
                    pos = end
                elif c == "]" and st == _FIRST:
                    completions.append(self._pop())
                    st = _AFTER if self._stack else _DONE
                    pos += 1
                else:
                    raise self._fail(self._base + pos, "expected a value")
            elif st == _COLON:
                if c != ":":
                    raise self._fail(self._base + pos, "expected ':'")
                st = _VALUE
                pos += 1
            elif st in _AT_KEY:
                if c == '"':
                    st = _KEY
                    pos += 1
                elif c == "}" and st == _OBJ_FIRST:
                    completions.append(self._pop())
                    st = _AFTER if self._stack else _DONE
                    pos += 1
                else:
                    expected = "a key or '}'" if st == _OBJ_FIRST else "a key"
                    raise self._fail(self._base + pos, f"expected {expected}")
            else:  # _DONE
                raise self._fail(self._base + pos, "data after the value")
        if pos < n:
            self._pending = text[pos:]
        self._base += pos
        self._state = st
        return changed

    def finish(self) -> Any:
        """End of input: the final value. Raises `PartialJSONError` when the value is not
        complete (a top-level number held back for a delimiter completes here)."""
        if self._error is not None:
            raise self._error
        completions: list[Path] = []
        self._completed = completions
        self._finished = True
        if self._state == _VALUE and self._top is None and self._pending:
            token = self._pending
            m = _NUMBER_PREFIX.match(token)
            end = m.end() if m else 0
            if token[0] in _NUMBER_START and end == len(token) and token[-1].isdigit():
                self._root = self._number(token, 0)
                self._pending = ""
                self._base += len(token)
                self._state = _DONE
                completions.append(())
        if self._state != _DONE:
            raise self._fail(self._base + len(self._pending), "unexpected end of input")
        return self._root

    # --- the parts of feed --------------------------------------------------------------------

    def _scalar_done(self, completions: list[Path]) -> int:
        """Note the scalar just placed as complete; the state after it."""
        top = self._top
        if top is None:
            completions.append(())
            return _DONE
        completions.append((*self._paths[-1], self._key if self._top_is_obj else len(top) - 1))
        return _AFTER

    def _fail(self, offset: int, reason: str) -> PartialJSONError:
        self._error = PartialJSONError(offset, reason)
        return self._error

    def _place(self, value: Any) -> None:
        """Put a value that has started (or a complete scalar) where it belongs."""
        top = self._top
        if top is None:
            self._root = value
        elif self._top_is_obj:
            top[self._key] = value
        else:
            top.append(value)

    def _append(self, piece: str) -> None:
        """Grow the open string by `piece`. The slot is emptied first so the string's only
        reference is the local one: CPython then extends it in place instead of copying it,
        which keeps a long string fed in small pieces linear (a reference kept by the caller
        only makes that one step copy)."""
        top = self._top
        if top is None:
            s = self._root
            self._root = ""
            s += piece
            self._root = s
        elif self._top_is_obj:
            key = self._key
            s = top[key]
            top[key] = ""
            s += piece
            top[key] = s
        else:
            s = top[-1]
            top[-1] = ""
            s += piece
            top[-1] = s

    def _push(self, container: dict[str, Any] | list[Any], pos: int) -> None:
        stack = self._stack
        if len(stack) >= MAX_DEPTH:
            raise self._fail(self._base + pos, "nested too deep")
        top = self._top
        if top is None:
            self._root = container
            path: Path = ()
        elif self._top_is_obj:
            top[self._key] = container
            path = (*self._paths[-1], self._key)
        else:
            top.append(container)
            path = (*self._paths[-1], len(top) - 1)
        stack.append(container)
        self._paths.append(path)
        self._top = container
        self._top_is_obj = type(container) is dict

    def _pop(self) -> Path:
        """Close the innermost container; its path."""
        stack = self._stack
        stack.pop()
        path = self._paths.pop()
        if stack:
            top = stack[-1]
            self._top = top
            self._top_is_obj = type(top) is dict
        else:
            self._top = None
        return path

    def _number(self, token: str, pos: int) -> int | float:
        try:
            if "." in token or "e" in token or "E" in token:
                return float(token)
            return int(token)
        except ValueError:  # an integer past Python's digit limit
            raise self._fail(self._base + pos, "number too long") from None

    def _scan(self, text: str, pos: int) -> tuple[str, int, bool]:
        """The slow path of a string: decode from `pos` through escapes. Returns the decoded
        piece, where scanning stopped and whether the closing quote was reached; stopping
        before the end of `text` without it means an escape to hold back from there."""
        n = len(text)
        pieces: list[str] = []
        run = _RUN.match
        while True:
            m = run(text, pos)
            end = m.end() if m else pos
            if end > pos:
                pieces.append(text[pos:end])
            if end == n:
                return "".join(pieces), n, False
            c = text[end]
            if c == '"':
                return "".join(pieces), end + 1, True
            if c != "\\":
                raise self._fail(self._base + end, "control character in string")
            if end + 1 == n:
                return "".join(pieces), end, False
            c = text[end + 1]
            if c != "u":
                char = _ESCAPES.get(c)
                if char is None:
                    raise self._fail(self._base + end + 1, "invalid escape")
                pieces.append(char)
                pos = end + 2
                continue
            digits = text[end + 2 : end + 6]
            if not _HEX4.fullmatch(digits):
                for i, d in enumerate(digits):
                    if d not in _HEX:
                        raise self._fail(self._base + end + 2 + i, "invalid \\u escape")
                return "".join(pieces), end, False  # cut short: hold it back
            code = int(digits, 16)
            pos = end + 6
            if 0xD800 <= code <= 0xDBFF:  # a high surrogate: joined with a low one if it follows
                after = text[pos : pos + 6]
                if len(after) == 6:
                    if after[:2] == "\\u" and _HEX4.fullmatch(after, 2):
                        low = int(after[2:], 16)
                        if 0xDC00 <= low <= 0xDFFF:
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            pos += 6
                elif not after or _LOW_PREFIX.fullmatch(after):
                    return "".join(pieces), end, False  # may still become a pair
            pieces.append(chr(code))
