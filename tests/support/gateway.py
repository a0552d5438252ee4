"""What the gateway wire tests (tests/protocols/{openai_chat,openai_responses,
anthropic_messages,gemini_generate_content}/test_gateway.py, and their support modules) share: SPEC
events built as the grammar says (a delta, a stop, one done item's `K.delta+ K.done` group), done
items, the hypothesis draws more than one of them makes, and a loopback server that answers an
official SDK with queued bytes and records each request it sent."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from modelstream.server import BackgroundServer
from modelstream.types import Event, Usage
from support.messages import call
from support.messages import text as text  # re-exported: a done item
from support.messages import thinking as thinking  # re-exported: a done item

# --- SPEC events ---------------------------------------------------------------------------------

USAGE_KEYS = ("cached_tokens", "prompt_tokens", "thoughts_tokens", "response_tokens")
# the field of each kind that grows fragment by fragment
GROWING = {
    "text": "text",
    "thinking": "thinking",
    "tool_call": "arguments",
    "inline_data": "data",
    "inline_thinking": "data",
}


def delta(item: dict[str, Any]) -> Event:
    return {
        "role": "assistant",
        "event_type": "delta",
        "content_items": [item],  # type: ignore[list-item]
        "usage_metadata": None,
        "finish_reason": None,
        "created_at": 0,
    }


def stop(finish: str = "stop", usage: Usage | None = None) -> Event:
    """The stop event; without `usage`, every count unknown."""
    return {
        "role": "assistant",
        "event_type": "stop",
        "content_items": [],
        "usage_metadata": usage
        or {
            "cached_tokens": None,
            "prompt_tokens": None,
            "thoughts_tokens": None,
            "response_tokens": None,
        },
        "finish_reason": finish,  # type: ignore[typeddict-item]
        "created_at": 0,
    }


def tool_call(
    call_id: str, name: str, arguments: dict[str, Any], fidelity: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A `tool_call.done` item (`text` and `thinking` build the other done items)."""
    return call(call_id, name, arguments, **(fidelity or {}))


def streamed(item: dict[str, Any], *, compact: bool = False) -> Any:
    """A done item's growing field as its fragments join: a call's arguments as JSON text
    (`compact`: without spaces)."""
    kind = item["type"].removesuffix(".done")
    if kind == "tool_call":
        return json.dumps(item["arguments"], separators=(",", ":") if compact else None)
    return item[GROWING[kind]]


def halves(value: Any) -> list[Any]:
    """Two fragments: the first half (empty for a single character) and the rest."""
    middle = len(value) // 2
    return [value[:middle], value[middle:]]


def group(
    item: dict[str, Any], pieces: Sequence[Any] | None = None, *, fidelity_at: int | None = None
) -> list[Event]:
    """One done item as its group (SPEC §2): a delta per piece of the growing field (default:
    the `halves` of `streamed(item)`; a call's id and name on the first only, `""` after; a
    blob's mime type on each), then the done item. The item's fidelity goes on fragment
    `fidelity_at` (the last one if there are fewer), or, by default, as the assembler sends it
    (rule C), on an empty fragment of its own before the done."""
    kind = item["type"].removesuffix(".done")
    growing = GROWING[kind]
    pieces = list(halves(streamed(item)) if pieces is None else pieces) or [""]
    joined = pieces[0][:0].join(pieces)
    if kind == "tool_call":
        assert json.loads(joined) == item["arguments"], (pieces, item)
    else:
        assert joined == item[growing], (pieces, item)
    fixed: dict[str, Any] = {}
    later: dict[str, Any] = {}
    if kind == "tool_call":
        fixed = {"tool_call_id": item["tool_call_id"], "name": item["name"]}
        later = {"tool_call_id": "", "name": ""}
    elif growing == "data":
        fixed = later = {"mime_type": item["mime_type"]}
    fragments = [
        {"type": f"{kind}.delta", **(later if position else fixed), growing: piece}
        for position, piece in enumerate(pieces)
    ]
    fidelity = item.get("fidelity")
    if fidelity and fidelity_at is not None:
        fragments[min(fidelity_at, len(fragments) - 1)]["fidelity"] = fidelity
    elif fidelity:
        empty = pieces[0][:0]
        fragments.append({"type": f"{kind}.delta", **later, growing: empty, "fidelity": fidelity})
    return [delta(fragment) for fragment in fragments] + [delta(dict(item))]


def done_items(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [
        dict(item)
        for event in events
        for item in event["content_items"]
        if item["type"].endswith(".done")
    ]


# --- hypothesis draws ----------------------------------------------------------------------------


def json_trees(leaves: st.SearchStrategy[Any], key_size: int = 5) -> st.SearchStrategy[Any]:
    """JSON values: `leaves`, in lists and objects (keys of up to `key_size` characters)."""
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.text(max_size=key_size), inner, max_size=3)
        ),
        max_leaves=8,
    )


def strict_objects(names: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Object schemas of up to two string properties named by `names`, in the form strict
    mode takes (every property required, the object closed), which the encoders send as they
    are."""
    return st.builds(
        lambda properties: {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
        st.dictionaries(names, st.just({"type": "string"}), max_size=2),
    )


def usage_dicts(counts: st.SearchStrategy[int | None]) -> st.SearchStrategy[dict[str, Any]]:
    """SPEC usage, each count drawn from `counts`."""
    return st.fixed_dictionaries({key: counts for key in USAGE_KEYS})


# the Chat and Responses tests' texts and call arguments
words = st.text(string.ascii_letters + " .,é日🙂\n", min_size=1, max_size=24)
call_arguments = st.dictionaries(
    st.text(string.ascii_lowercase, min_size=1, max_size=6),
    json_trees(
        st.none()
        | st.booleans()
        | st.integers(-(2**53), 2**53)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=8)
    ),
    max_size=4,
)


def draw_pieces(draw: Any, value: str) -> list[str]:
    """`value` cut at up to four drawn places."""
    if not value:
        return [""]
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(value) - 1)), max_size=4)))
    cuts = [c for c in cuts if 0 < c < len(value)]
    return [value[a:b] for a, b in zip([0, *cuts], [*cuts, len(value)], strict=True)]


def random_cuts(data: bytes, rng: random.Random) -> list[bytes]:
    """`data` cut at up to twelve random places."""
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(0, 12))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


# --- a loopback server for an official SDK -------------------------------------------------------


@dataclass
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Received:
    """One request the server was sent: its path, headers (lower-case names), query, and its
    body's JSON (None without a body)."""

    path: str
    headers: dict[str, str]
    query: dict[str, str]
    body: Any


@dataclass
class Loopback:
    """Answers with the queued answers, in order, and records each request."""

    answers: list[Answer] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    url: str = ""

    def stream(self, body: bytes) -> None:
        self.answers.append(Answer(200, body, "text/event-stream; charset=utf-8"))

    def json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self.answers.append(Answer(status, json.dumps(value).encode(), headers=headers or {}))

    async def _answer(self, request: Request) -> Response:
        body = await request.body()
        self.requests.append(
            Received(
                request.url.path,
                {name.lower(): value for name, value in request.headers.items()},
                dict(request.query_params),
                json.loads(body) if body else None,
            )
        )
        answer = self.answers.pop(0)
        return Response(
            answer.body, answer.status, headers=answer.headers, media_type=answer.content_type
        )


@contextmanager
def serve(*routes: tuple[str, str]) -> Iterator[Loopback]:
    """A `Loopback` on 127.0.0.1 answering each (method, path) route."""
    server = Loopback()
    app = Starlette(
        routes=[Route(path, server._answer, methods=[method]) for method, path in routes]
    )
    with BackgroundServer(app) as background:
        server.url = background.url
        yield server
