"""OpenTelemetry export: one CLIENT span per turn with the GenAI semantic-convention
attributes, captured by the SDK's in-memory exporter."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from modelstream import Client, IncompleteStreamError
from modelstream.testing import Emulator, Reply, Text, Thinking, Turn
from modelstream.traces import TraceStore, resolve_sinks
from support import missing
from support.traces import API_KEY, usage, user

try:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, StatusCode

    from modelstream.traces.otel import OtelExporter
except ImportError:  # pragma: no cover - the test extra installs it
    OTEL = False
else:
    OTEL = True


@pytest.fixture
def spans() -> Iterator[Any]:
    if not OTEL:
        missing("opentelemetry-sdk is not installed (pip install -e '.[test]')")
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield OtelExporter(tracer_provider=provider), memory
    provider.shutdown()


def finished(memory: Any) -> list[ReadableSpan]:
    return list(memory.get_finished_spans())


def test_a_turn_becomes_one_client_span_with_the_genai_attributes(
    emu: Emulator, store: TraceStore, spans: Any
) -> None:
    exporter, memory = spans
    emu.queue(
        Reply.turn(
            Turn(items=[Thinking("hmm"), Text("Hi!")], usage=usage(30, 12, 8, 4)), delay=0.002
        )
    )
    with (
        Client(
            "gpt-5-mini",
            api_key=API_KEY,
            base_url=emu.base_url("openai-responses"),
            traces=[store, exporter],
        ) as client,
        client.stream(
            [user("hi")], {"trace_id": "otel-1", "max_tokens": 64, "temperature": 0.3}
        ) as stream,
    ):
        for _ in stream:
            pass
    result = stream.result
    assert result is not None and result.status == "final"

    (span,) = finished(memory)
    assert span.name == "chat gpt-5-mini"
    assert span.kind == SpanKind.CLIENT
    assert span.status.status_code == StatusCode.UNSET
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-5-mini",
        "gen_ai.request.max_tokens": 64,
        "gen_ai.request.temperature": 0.3,
        "gen_ai.conversation.id": "otel-1",
        "gen_ai.response.model": result.metadata.model,
        "gen_ai.response.id": result.metadata.response_id,
        "gen_ai.response.finish_reasons": (result.metadata.raw_finish_reason,),
        "gen_ai.usage.input_tokens": 42,
        "gen_ai.usage.output_tokens": 12,
        "gen_ai.usage.cache_read.input_tokens": 30,
        "gen_ai.usage.reasoning.output_tokens": 8,
        "gen_ai.response.time_to_first_chunk": round(result.metadata.timings["ttfe_ms"] / 1000, 6),
        "modelstream.client_type": "openai-responses",
        "modelstream.source": "client",
        "modelstream.status": "final",
    }
    (turn,) = store.get_trace("otel-1")
    assert span.start_time == turn.created_at * 1_000_000
    assert span.end_time is not None and span.start_time is not None
    duration_ms = (span.end_time - span.start_time) / 1e6
    assert duration_ms == pytest.approx(turn.timings["total_ms"], abs=0.01)


def test_gemini_spans_name_the_generate_content_operation_and_the_gcp_gemini_provider(
    emu: Emulator, spans: Any
) -> None:
    exporter, memory = spans
    emu.queue(Reply.turn(Turn.text("ok")))
    with Client(
        "gemini-2.5-flash",
        api_key=API_KEY,
        base_url=emu.base_url("gemini-generate-content"),
        traces=exporter,
    ) as client:
        client.complete([user("hi")], {"trace_id": "g"})

    (span,) = finished(memory)
    attributes = span.attributes or {}
    assert span.name == "generate_content gemini-2.5-flash"
    assert attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert attributes["gen_ai.response.finish_reasons"] == ("STOP",)


def test_a_partial_turn_is_an_error_span_with_its_status_as_error_type(
    emu: Emulator, spans: Any
) -> None:
    exporter, memory = spans
    emu.queue(Reply.turn(Turn.text("cut " * 100), disconnect_after_bytes=1200))
    with (
        Client(
            "claude-sonnet-4-5",
            api_key=API_KEY,
            base_url=emu.base_url("anthropic-messages"),
            traces=exporter,
        ) as client,
        pytest.raises(IncompleteStreamError) as raised,
    ):
        client.complete([user("hi")], {"trace_id": "cut"})

    (span,) = finished(memory)
    attributes = span.attributes or {}
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == str(raised.value)
    assert attributes["error.type"] == "incomplete"
    assert "gen_ai.response.finish_reasons" not in attributes  # never invented


def test_the_environment_turns_on_the_exporter_beside_the_trace_file() -> None:
    if not OTEL:
        missing("opentelemetry-api is not installed (pip install -e '.[test]')")
    sinks = resolve_sinks(
        None, {"MODELSTREAM_TRACES": os.devnull + ".sqlite3", "MODELSTREAM_TRACES_OTEL": "1"}
    )
    assert [type(sink).__name__ for sink in sinks] == ["TraceStore", "OtelExporter"]
