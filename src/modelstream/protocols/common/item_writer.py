"""The walk every front-end wire's writer takes over the SPEC grammar (`delta+ done` per item,
one item open at a time, then `stop`): the writers differ only in the frames they write, so the
checks that a turn keeps the grammar, and the refusal of an item the wire cannot carry, are
written once here."""

from __future__ import annotations

from typing import Any

from ...types import Event
from .gateway import GatewayError, WriteContext


def message_id_of(ctx: WriteContext) -> str:
    """A front-end message's id: the stream's own (`resp_…` → `msg_…`), the same on a replay."""
    return "msg_" + ctx.response_id.removeprefix("resp_")


class ItemWriter:
    """SPEC events in, a front-end wire's frames out; a subclass writes the frames (`_start`,
    `_open_item`, `_fragment`, `_close_item`, `_stop`, `_error`) for the item kinds it
    `carries`, and `wire` names the wire in the error for any other kind."""

    carries: frozenset[str] = frozenset({"text", "thinking", "tool_call"})
    wire = "this stream"

    def __init__(self, ctx: WriteContext) -> None:
        self._ctx = ctx
        self._started = False
        self._ended = False
        self._open: str | None = None  # the kind of the open item

    # --- the StreamWriter surface ------------------------------------------------------------

    def feed(self, event: Event) -> list[bytes]:
        if self._ended:
            return []
        frames = self._begin()
        if event["event_type"] == "stop":
            if self._open is not None:
                return frames + self._broken(f"the turn stopped inside an open {self._open} item")
            self._ended = True
            return frames + self._stop(event)
        items = event["content_items"]
        if len(items) != 1:
            return frames + self._broken("a delta event must carry exactly one item")
        item: dict[str, Any] = items[0]  # type: ignore[assignment]
        kind, _, phase = item["type"].partition(".")
        if kind not in self.carries:
            return frames + self.fail(
                GatewayError(
                    502,
                    "UnsupportedOutputError",
                    f"the answer holds a {kind} item ({item.get('mime_type') or 'no type'}), "
                    f"which {self.wire} cannot carry",
                )
            )
        if phase == "delta":
            if self._open is None:
                self._open = kind
                frames += self._open_item(kind, item)
            elif self._open != kind:
                return frames + self._broken(f"a {kind} fragment inside an open {self._open} item")
            frames += self._fragment(kind, item)
        elif self._open != kind:
            return frames + self._broken(f"{item['type']} without its fragments")
        else:
            self._open = None
            frames += self._close_item(kind, item)
        return frames

    def fail(self, error: GatewayError) -> list[bytes]:
        if self._ended:
            return []
        frames = self._begin()
        self._ended = True
        return frames + self._error(error)

    def _begin(self) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        return self._start()

    def _broken(self, why: str) -> list[bytes]:
        """Events that break the grammar: a bug upstream of the writer, never a normal end."""
        message = f"the gateway produced an invalid stream: {why}"
        return self.fail(GatewayError(500, "StreamProtocolError", message))

    # --- what a wire writes ------------------------------------------------------------------

    def _start(self) -> list[bytes]:
        raise NotImplementedError

    def _open_item(self, kind: str, item: dict[str, Any]) -> list[bytes]:
        raise NotImplementedError

    def _fragment(self, kind: str, item: dict[str, Any]) -> list[bytes]:
        raise NotImplementedError

    def _close_item(self, kind: str, item: dict[str, Any]) -> list[bytes]:
        raise NotImplementedError

    def _stop(self, event: Event) -> list[bytes]:
        raise NotImplementedError

    def _error(self, error: GatewayError) -> list[bytes]:
        raise NotImplementedError
