"""The one table of item kinds (SPEC §1–3): what every reader of items needs to know about a kind.

Why one table: the assembler, the accumulator, the grammar checker, the JSON wire, the trace
store and the CLI renderer each join fragments, pick a growing field, decode base64 or tell
content from thinking. Written into each of them, the knowledge drifts (one reader forgets a
kind, another joins an embedding as a string); read from here, adding or changing a kind is one
record, and `tests/core/test_items.py` checks that every reader agrees with it.

A record says, for one kind:
  growing      the field that grows fragment by fragment ("": no delta form, user-only)
  join         how the fragments of one item join (`Join`); `joined(parts)` does it
  empty        the growing field of a fragment with nothing in it (a fidelity-only fragment);
               None where every fragment carries a whole value (embeddings)
  binary       the growing field is bytes: base64 on the JSON wire
  content      counts as an answer; a turn with none ends in `EmptyResponseError`
  fixed        fields set by the first fragment that the `.done` repeats unchanged
  fixed_first_only  those fields are `""` on every fragment after the first (tool calls)
  split_mime   mime-type prefixes whose fragments are each their own item (`fragments_join`):
               every image and every inline thinking part stands alone, the audio chunks of
               one clip join (SPEC §3)
  roles        the message roles that may hold the kind's `.done`
  search       the fields whose words a trace search may find
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_args

import orjson

from .types import ITEM_KINDS, Role


class Join(enum.Enum):
    """How the fragments of one item join into its `.done` (SPEC §2 rule 3)."""

    CONCAT_STR = "concatenate str"
    CONCAT_BYTES = "concatenate bytes"
    # The raw JSON text fragments concatenate; the `.done` holds the parsed object (what to do
    # when it does not parse is the reader's policy: strict or lenient).
    JSON_ARGUMENTS = "parse joined JSON arguments"
    WHOLE = "take the whole vector"  # one fragment carries the whole value


def _last(parts: list[Any]) -> Any:
    return parts[-1]


_JOINERS: dict[Join, Callable[[list[Any]], Any]] = {
    Join.CONCAT_STR: "".join,
    Join.CONCAT_BYTES: b"".join,
    Join.JSON_ARGUMENTS: "".join,
    Join.WHOLE: _last,
}
_EMPTY: dict[Join, Any] = {
    Join.CONCAT_STR: "",
    Join.CONCAT_BYTES: b"",
    Join.JSON_ARGUMENTS: "",
    Join.WHOLE: None,  # no empty fragment: the one fragment carries the whole value
}
_BOTH: frozenset[Role] = frozenset(get_args(Role))


@dataclass(frozen=True, slots=True)
class Kind:
    """One item kind. Derived fields (type names, empty value, joiner) are filled in once."""

    name: str
    growing: str
    join: Join | None
    content: bool
    fixed: tuple[str, ...] = ()
    fixed_first_only: bool = False
    split_mime: tuple[str, ...] = ()
    roles: frozenset[Role] = _BOTH
    search: tuple[str, ...] = ()
    delta_type: str = field(init=False)
    done_type: str = field(init=False)
    binary: bool = field(init=False)
    empty: Any = field(init=False)
    joined: Callable[[list[Any]], Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "delta_type", f"{self.name}.delta" if self.growing else "")
        set_(self, "done_type", f"{self.name}.done")
        set_(self, "binary", self.join is Join.CONCAT_BYTES)
        set_(self, "empty", None if self.join is None else _EMPTY[self.join])
        set_(self, "joined", _last if self.join is None else _JOINERS[self.join])

    @property
    def streams(self) -> bool:
        """The kind has a delta form: it can appear in an event stream."""
        return bool(self.growing)

    @property
    def parses_arguments(self) -> bool:
        """The `.done` holds the parsed JSON object of the joined fragments."""
        return self.join is Join.JSON_ARGUMENTS

    def fragments_join(self, mime_type: str = "") -> bool:
        """Whether consecutive fragments (of this mime type) join into one item, or each is
        its own item."""
        if self.join is Join.WHOLE:
            return False
        return not mime_type.startswith(self.split_mime) if self.split_mime else True


TEXT = Kind("text", "text", Join.CONCAT_STR, content=True, search=("text",))
THINKING = Kind(
    "thinking",
    "thinking",
    Join.CONCAT_STR,
    content=False,
    roles=frozenset({"assistant"}),
    search=("thinking",),
)
TOOL_CALL = Kind(
    "tool_call",
    "arguments",
    Join.JSON_ARGUMENTS,
    content=True,
    fixed=("tool_call_id", "name"),
    fixed_first_only=True,
    roles=frozenset({"assistant"}),
    search=("name", "arguments"),
)
INLINE_DATA = Kind(
    "inline_data",
    "data",
    Join.CONCAT_BYTES,
    content=True,
    fixed=("mime_type",),
    split_mime=("image/",),
)
INLINE_THINKING = Kind(
    "inline_thinking",
    "data",
    Join.CONCAT_BYTES,
    content=False,
    fixed=("mime_type",),
    split_mime=("",),  # every part stands alone
)
EMBEDDING = Kind("embedding", "embedding", Join.WHOLE, content=True)
# User-only kinds: no delta form, never in a stream.
IMAGE_URL = Kind(
    "image_url", "", None, content=True, roles=frozenset({"user"}), search=("image_url",)
)
TOOL_RESULT = Kind(
    "tool_result", "", None, content=True, roles=frozenset({"user"}), search=("text",)
)

KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        TEXT,
        THINKING,
        TOOL_CALL,
        INLINE_DATA,
        INLINE_THINKING,
        EMBEDDING,
        IMAGE_URL,
        TOOL_RESULT,
    )
}
# The kinds of the event grammar (SPEC §2), in SPEC order.
STREAM_KINDS: dict[str, Kind] = {name: kind for name, kind in KINDS.items() if kind.streams}
# item type ("text.delta", "image_url.done", ...) -> (its kind, is the `.done`)
BY_TYPE: dict[str, tuple[Kind, bool]] = {
    **{kind.delta_type: (kind, False) for kind in STREAM_KINDS.values()},
    **{kind.done_type: (kind, True) for kind in KINDS.values()},
}
# Item types whose growing field is bytes (base64 on the JSON wire).
BINARY_TYPES: frozenset[str] = frozenset(t for t, (kind, _) in BY_TYPE.items() if kind.binary)

if tuple(STREAM_KINDS) != ITEM_KINDS:  # pragma: no cover - a table out of step with the types
    raise RuntimeError(f"items.STREAM_KINDS {tuple(STREAM_KINDS)} != types.ITEM_KINDS")


def kind_of(item_type: str) -> Kind | None:
    """The kind of an item type (`text.delta`, `tool_result.done`), or None if unknown."""
    entry = BY_TYPE.get(item_type)
    return None if entry is None else entry[0]


def decode_binary(item: Any, decode: Callable[[str], bytes]) -> None:
    """Turn a JSON item's base64 growing field back into bytes, in place (`decode` is the
    base64 decoder, so callers choose strict or lenient)."""
    item_type = item.get("type") if isinstance(item, dict) else None
    if isinstance(item_type, str):
        entry = BY_TYPE.get(item_type)
        if entry is not None and entry[0].binary:
            growing = entry[0].growing
            value = item.get(growing)
            if isinstance(value, str):
                item[growing] = decode(value)


def search_text(item: Any) -> str:
    """The words of an item a search may find (its `search` fields; non-strings as JSON)."""
    kind = kind_of(item.get("type", "")) if isinstance(item, dict) else None
    if kind is None:
        return ""
    words = [_words(item.get(name)) for name in kind.search]
    return " ".join(word for word in words if word)


def _words(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()
