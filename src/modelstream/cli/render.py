"""How `replay`, `chat` and `demo` show a stream: JSON lines for programs, Rich text for people.

Both renderers get the same calls in order: `started(metadata)` when what is known before the
first event should show at once (optional), `events(...)` for each batch of events, then
`stopped(metadata)`, `failed(error, metadata)` or `cancelled(partial)`. They hold no protocol
logic: what they show is what the events, the stream metadata and the partial response say, and
how an item shows follows its kind's record in `modelstream.items` (strings stream as they grow,
thinking dimmed, bytes and vectors are summed up when done).
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any, Literal, Protocol

import orjson

from .. import jsonwire
from ..console.counts import counted
from ..errors import (
    LostContentError,
    ProviderConnectionError,
    ProviderError,
    StreamError,
    ToolCallArgumentParseError,
)
from ..items import BY_TYPE, Join, Kind, kind_of
from ..results import PartialResponse, StreamMetadata
from ..types import Event, Usage

if TYPE_CHECKING:  # imported when the first pretty renderer is made (`_import_rich`)
    from rich.console import Console
    from rich.text import Text

_USAGE_LABELS = (
    ("cached_tokens", "cached"),
    ("prompt_tokens", "prompt"),
    ("thoughts_tokens", "thoughts"),
    ("response_tokens", "response"),
)


class Renderer(Protocol):
    def started(self, metadata: StreamMetadata) -> None: ...

    def events(self, events: list[Event], metadata: StreamMetadata) -> None: ...

    def stopped(self, metadata: StreamMetadata) -> None: ...

    def failed(self, error: StreamError, metadata: StreamMetadata) -> None: ...

    def cancelled(self, partial: PartialResponse) -> None: ...


class JsonlRenderer:
    """One SPEC JSON event per line; a stream that fails ends with one `{"error": ...}` line."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out

    def started(self, metadata: StreamMetadata) -> None:
        pass

    def events(self, events: list[Event], metadata: StreamMetadata) -> None:
        if events:
            self.out.write(jsonwire.dumps_lines(events))
            self.out.flush()

    def stopped(self, metadata: StreamMetadata) -> None:
        pass

    def failed(self, error: StreamError, metadata: StreamMetadata) -> None:
        self.out.write(jsonwire.dumps(jsonwire.error_object(error)) + b"\n")
        self.out.flush()

    def cancelled(self, partial: PartialResponse) -> None:
        """Cancellation ends the stream like an error does: one last line, so the file still
        passes `check` (a stream ends with `stop` or an error)."""
        body = {
            "type": "CancelledError",
            "message": partial.reason,
            "partial_status": partial.status,
        }
        self.out.write(jsonwire.dumps({"error": body}) + b"\n")
        self.out.flush()


def _import_rich() -> type[Console]:
    """Rich, for this module's pretty half, imported once when it is first needed (JSON lines,
    `replay --format jsonl` and `chat --json`, start without it: a fifth of their start-up).
    Returns the console class `pretty_console` makes."""
    console_class: type[Console] | None = globals().get("_Console")
    if console_class is None:
        from rich.console import Console
        from rich.text import Text

        class _Console(Console):
            def on_broken_pipe(self) -> None:
                # Rich exits with status 1 here; let the command handle it like in jsonl format.
                self.quiet = True
                raise BrokenPipeError

        globals().update(Console=Console, Text=Text, _Console=_Console)
        console_class = _Console
    return console_class


def pretty_console() -> Console:
    """Stdout for people: no markup or emoji codes read from model text, no highlighting."""
    return _import_rich()(highlight=False, markup=False, emoji=False)


Summary = Literal["table", "line"]


class PrettyRenderer:
    """Items as they grow (text as it arrives, thinking dimmed, tool calls with their
    arguments), then a summary of the turn or the error and what was received.

    `summary="line"` ends a turn that stopped with one line (finish reason, usage and the
    fidelity carried for the next turn) instead of the label/value table."""

    def __init__(
        self, console: Console, label: str, protocol: str, *, summary: Summary = "table"
    ) -> None:
        _import_rich()
        self.console = console
        self.label = label
        self.protocol = protocol
        self.summary = summary
        self._header_shown = False
        self._response_id_shown = False
        self._fidelity: list[tuple[str, list[str]]] = []  # (item kind, fidelity keys)
        self._at_line_start = True
        self._kind: Kind | None = None  # kind of the group being shown
        self._raw: list[str] = []  # tool call argument fragments of the open group
        self._stop_usage: Usage | None = None
        self._pending = Text()  # streamed fragments not printed yet

    # --- the stream ----------------------------------------------------------------------

    def started(self, metadata: StreamMetadata) -> None:
        """Show the header now, from what is known before the response (protocol, model)."""
        with self.console:
            self._header(metadata)

    def events(self, events: list[Event], metadata: StreamMetadata) -> None:
        if not events:
            return
        with self.console:  # one write per batch: a long reply is thousands of deltas
            self._header(metadata)
            for event in events:
                if event["event_type"] == "stop":
                    self._stop_usage = event["usage_metadata"]
                for item in event["content_items"]:
                    entry = BY_TYPE.get(item["type"])
                    if entry is None:
                        continue  # not an item of the grammar: nothing to show
                    kind, done = entry
                    if done:
                        self._done(kind, dict(item))
                    else:
                        self._delta(kind, dict(item))
            self._flush()

    def stopped(self, metadata: StreamMetadata) -> None:
        self._header(metadata)
        if self.summary == "line":
            self._summary_line(metadata)
            return
        reason = Text(str(metadata.finish_reason), style="bold green")
        if metadata.raw_finish_reason is not None:
            reason.append(f"  (provider: {metadata.raw_finish_reason})", style="dim")
        self._summary(
            [
                ("finish reason", reason),
                ("usage", _usage(self._stop_usage)),
                ("cost", _cost(self._stop_usage, metadata)),
                *self._stream_facts(metadata),
                *_facts(metadata),
            ]
        )

    def failed(self, error: StreamError, metadata: StreamMetadata) -> None:
        self._header(metadata)
        if isinstance(error, ProviderConnectionError):  # nothing was sent: no partial to show
            self._end_line()
            self._print(Text(f"error: {error}", style="bold red"), soft_wrap=True)
            return
        rows = [("error", Text(f"{type(error).__name__}: {error}", style="bold red"))]
        partial = error.partial
        if partial is not None:
            rows.append(("partial", _partial_status(partial, error)))
            rows.append(("received", _received(partial)))
            rows.append(("usage", _usage(partial.usage)))
            rows.append(("cost", _cost(partial.usage, metadata)))
        if isinstance(error, ToolCallArgumentParseError) and error.cut_off:
            rows.append(("hint", Text("the output limit cut the call: raise max_tokens")))
        elif isinstance(error, ToolCallArgumentParseError):
            rows.append(("hint", Text("replay with --lenient-tool-arguments to recover them")))
        elif isinstance(error, LostContentError):
            rows.append(("hint", Text("replay with --lenient-frames to skip what was lost")))
        self._summary([*rows, *self._stream_facts(metadata), *_facts(metadata)])

    def cancelled(self, partial: PartialResponse) -> None:
        metadata = partial.metadata
        self._header(metadata)
        reason = partial.reason
        if not reason.startswith(partial.status):
            reason = f"{partial.status}: {reason}"
        status = Text(reason, style="bold yellow")
        status.append("  (not final: do not act on its tool calls)", style="dim")
        rows = [
            ("partial", status),
            ("received", _received(partial)),
            ("usage", _usage(partial.usage)),
            ("cost", _cost(partial.usage, metadata)),
        ]
        self._summary([*rows, *self._stream_facts(metadata), *_facts(metadata)])

    # --- items ---------------------------------------------------------------------------

    def _delta(self, kind: Kind, item: dict[str, Any]) -> None:
        if self._kind is None:
            self._kind, self._raw = kind, []
            self._item_label(kind, item)
        if kind.join is Join.CONCAT_STR:
            self._write(item[kind.growing], "" if kind.content else "dim italic")
        elif kind.parses_arguments:
            self._raw.append(item[kind.growing])
            self._write(item[kind.growing], "cyan")

    def _done(self, kind: Kind, item: dict[str, Any]) -> None:
        if kind.parses_arguments:
            self._tool_call_done(kind, item)
        elif kind.binary:
            self._end_line()
            self._note(f"{counted(len(item[kind.growing]), 'byte')} of {item['mime_type']}")
        elif kind.join is Join.WHOLE:
            vector = item[kind.growing]
            head = ", ".join(f"{x:.4f}" for x in vector[:4])
            more = ", …" if len(vector) > 4 else ""
            self._note(f"{counted(len(vector), 'dimension')}: [{head}{more}]")
        self._end_line()
        fidelity = item.get("fidelity")
        if fidelity:
            self._note("fidelity: " + ", ".join(_describe(k, v) for k, v in fidelity.items()))
            self._fidelity.append((kind.name, list(fidelity)))
        self._kind = None

    def _tool_call_done(self, kind: Kind, item: dict[str, Any]) -> None:
        raw = "".join(self._raw)
        self._end_line()
        if not raw.strip():
            self._note("no arguments: {}")
            return
        try:
            streamed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            streamed = None
        arguments = item[kind.growing]
        if streamed != arguments:  # lenient mode recovered them (see diagnostics)
            self._note("arguments recovered as " + orjson.dumps(arguments).decode())

    def _item_label(self, kind: Kind, item: dict[str, Any]) -> None:
        self._print()
        label = Text("▍", style=_COLOURS.get(kind.name, "white"))
        label.append(kind.name.replace("_", " "), style="bold")
        if kind.parses_arguments:
            label.append(f" {item['name']}", style="bold magenta")
            label.append(f"  id {item['tool_call_id']}", style="dim")
        elif kind.binary:
            label.append(f" {item['mime_type']}", style="dim")
        self._print(label)

    # --- output helpers ------------------------------------------------------------------

    def _header(self, metadata: StreamMetadata) -> None:
        if self._header_shown:
            return
        self._header_shown = True
        facts = [self.protocol, metadata.provider, metadata.model, metadata.response_id]
        self._response_id_shown = metadata.response_id is not None
        header = Text(self.label, style="bold")
        header.append("  " + " · ".join(f for f in facts if f and f != self.label), style="dim")
        self._print(header, soft_wrap=True)

    def _stream_facts(self, metadata: StreamMetadata) -> list[tuple[str, Text]]:
        """What a live stream adds to a replay's summary: its response id when the header was
        shown before it was known, and the client's timings."""
        rows: list[tuple[str, Text]] = []
        if metadata.response_id is not None and not self._response_id_shown:
            rows.append(("response id", Text(metadata.response_id)))
        if metadata.timings:
            rows.append(("timings", _timings(metadata.timings)))
        return rows

    def _summary_line(self, metadata: StreamMetadata) -> None:
        self._end_line()
        self._print()
        line = Text("→ finish ", style="bold")
        line.append(str(metadata.finish_reason), style="bold green")
        if metadata.raw_finish_reason is not None:
            line.append(f" (provider: {metadata.raw_finish_reason})", style="dim")
        line.append(" · usage ", style="dim")
        line.append_text(_usage(self._stop_usage))
        line.append(" · fidelity carried: ", style="dim")
        carried = [f"{kind.replace('_', ' ')} {', '.join(keys)}" for kind, keys in self._fidelity]
        line.append("; ".join(carried) or "none")
        self._print(line, soft_wrap=True)

    def _summary(self, rows: list[tuple[str, Text]]) -> None:
        """Label/value lines, not a table: a table pads and cuts lines to the terminal width."""
        self._end_line()
        self._print()
        width = max(len(label) for label, _ in rows) + 2
        for label, value in rows:
            line = Text(label.ljust(width), style="bold")
            line.append_text(value)
            self._print(line, soft_wrap=True)

    def _write(self, piece: str, style: str) -> None:
        """Stream a fragment; fragments are joined and printed once per batch (`_flush`)."""
        if piece:
            self._pending.append(piece, style)
            self._at_line_start = piece.endswith("\n")

    def _flush(self) -> None:
        if self._pending:
            self.console.print(self._pending, end="", soft_wrap=True)
            self._pending = Text()

    def _print(self, *renderables: Any, **options: Any) -> None:
        self._flush()
        self.console.print(*renderables, **options)

    def _end_line(self) -> None:
        if not self._at_line_start:
            self._print()
            self._at_line_start = True

    def _note(self, note: str) -> None:
        self._print(Text(note, style="dim"), soft_wrap=True)


_COLOURS = {  # presentation only; every stream kind of `modelstream.items` has one
    "text": "green",
    "thinking": "bright_black",
    "tool_call": "magenta",
    "inline_data": "blue",
    "inline_thinking": "bright_black",
    "embedding": "yellow",
}


def _usage(usage: Usage | None) -> Text:
    if usage is None:
        return Text("unknown", style="dim")
    text = Text()
    for i, (field, label) in enumerate(_USAGE_LABELS):
        value = usage.get(field)
        if i:
            text.append(" · ", style="dim")
        text.append(f"{label} ")
        if value is None:
            text.append("unknown", style="dim")
        else:
            text.append(str(value))
    return text


_TIMING_LABELS = (("ttfb_ms", "ttfb"), ("ttfe_ms", "ttfe"), ("total_ms", "total"))


def _timings(timings: dict[str, float]) -> Text:
    """Milliseconds from the start of the call: response headers, first event, end."""
    text = Text()
    for field, label in _TIMING_LABELS:
        if field in timings:
            if text:
                text.append(" · ", style="dim")
            value = timings[field]
            text.append(f"{label} {value:.1f} ms" if value < 10 else f"{label} {value:.0f} ms")
    return text


def _facts(metadata: StreamMetadata) -> list[tuple[str, Text]]:
    rows: list[tuple[str, Text]] = []
    if metadata.lost_frames:
        lost = counted(metadata.lost_frames, "frame")
        lost += " skipped: content may be missing from this turn"
        rows.append(("lost", Text(lost, style="bold red")))
    if metadata.diagnostics:
        for diagnostic in metadata.diagnostics:
            rows.append(("diagnostic", Text(orjson.dumps(diagnostic).decode(), style="yellow")))
    else:
        rows.append(("diagnostics", Text("none", style="dim")))
    if metadata.skipped:
        skipped = ", ".join(f"{kind} ×{n}" for kind, n in sorted(metadata.skipped.items()))
        rows.append(("skipped", Text(skipped)))
    else:
        rows.append(("skipped", Text("nothing", style="dim")))
    return rows


def _partial_status(partial: PartialResponse, error: StreamError) -> Text:
    text = Text(partial.status, style="bold red")
    if partial.reason != str(error) and not isinstance(error, ProviderError):
        text.append(f": {partial.reason}")
    text.append("  (not final: do not act on its tool calls)", style="dim")
    return text


def _received(partial: PartialResponse) -> Text:
    kinds = [item["type"].partition(".")[0] for item in partial.items]
    text = Text(counted(len(kinds), "done item"))
    if kinds:
        text.append(f" ({', '.join(kinds)})")
    open_item: dict[str, Any] | None = dict(partial.open_item) if partial.open_item else None
    if open_item is None:
        text.append("; no open item")
        return text
    kind = kind_of(open_item["type"])
    if kind is None:
        return text
    text.append(f"; open {kind.name.replace('_', ' ')}")
    if kind.parses_arguments:
        text.append(f" {open_item['name']}", style="magenta")
    if kind.join is not Join.WHOLE and kind.growing in open_item:
        size = len(open_item[kind.growing])
        text.append(f" with {counted(size, 'byte' if kind.binary else 'char')} so far")
    return text


def _describe(key: str, value: Any) -> str:
    if isinstance(value, str) and len(value) > 24:
        return f"{key} ({counted(len(value), 'char')})"
    return f"{key} {orjson.dumps(value).decode()}"


def _cost(usage: Usage | None, metadata: StreamMetadata) -> Text:
    """The turn's cost by the model catalogue; "unknown" (with why), never 0 for unknown."""
    from decimal import Decimal

    from ..catalogue.cost import turn_cost  # read only when a turn ends

    cost = turn_cost(usage, metadata)
    if cost is None:
        return Text(
            f"unknown (no catalogue price for {metadata.model or 'this model'})", style="dim"
        )
    total = cost.total
    if total is None:
        return Text("unknown (part of the usage or its price is unknown)", style="dim")
    amount = f"{total:.6f}" if total < Decimal("0.01") else f"{total:.4f}"
    money = f"${amount}" if cost.currency == "USD" else f"{amount} {cost.currency}"
    return Text(f"{money} ({cost.model} list price)")
