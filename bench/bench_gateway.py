"""Gateway: one upstream relayed by each inbound wire of `modelstream serve` and by LiteLLM.

Separate processes, so no two parties share a GIL: the upstream (`bench_load.serve_upstream` as
this file's `--upstream` child: one uvicorn loop streaming the same synthetic Chat Completions
body to every request, one HTTP chunk per SSE frame, `--pace-ms` apart), the byte-for-byte relay
(`bench_load.py --floor`), one `modelstream serve` per inbound wire (`bench_relay.RelayServer`,
the model served with `client_type = "openai-chat"`), the LiteLLM proxy (`litellm --config`,
`openai/<model>` with `api_base` = the same upstream, in its own venv, offline, no database, no
callbacks) and the load client (this file's `--load` child: N concurrent streams over one httpx
client, bytes read raw, the first content event timed).

Targets, side by side in one run:

    floor      the byte relay carrying the upstream's own stream
    stream     POST /v1/stream (the SPEC wire)
    chat       POST /v1/chat/completions       (OpenAI Chat)
    responses  POST /v1/responses              (OpenAI Responses)
    anthropic  POST /v1/messages               (Anthropic Messages)
    gemini     POST /v1beta/models/M:streamGenerateContent?alt=sse
    litellm    LiteLLM's POST /v1/chat/completions

A wire whose route does not answer a whole stream yet (404, 501, a broken stream) is reported
"unavailable" with what it answered, and the rest runs. For each `--streams` count, `--rounds`
rounds; in each round every target carries N streams in turn (the order rotates). Printed per
target: server CPU µs per relayed event (the process's CPU from /proc, from just before each of
its runs until it settled after, over the upstream events of the streams it carried whole), time
to first content event p50/p99, RSS before, after the first round and after the last, errors.
Ratios are against baselines of the same run: our `/v1/stream`, LiteLLM, the byte relay's TTFE.

    .venv/bin/python bench/bench_gateway.py                      # 1 and 50 streams, 10 rounds
    .venv/bin/python bench/bench_gateway.py --no-litellm --streams 1 --rounds 1 --wires stream,chat
    .venv/bin/python bench/bench_gateway.py --pace-ms 20         # a model's pace (no TTFE target)

Exit status: 0 when every target met its bounds, 1 when one was missed, 2 when a party failed to
start (the upstream, the byte relay, a server) or a server died. An unavailable wire, or LiteLLM
failing to install or start, is printed and is not a failure.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import orjson

import bench_client
import bench_load
from bench_client import MODELS, PROMPT
from bench_load import FloorRelay, _loop_factory, body_of, percentile
from bench_relay import SERVER_KEY, UPSTREAM_KEY, RelayServer, log_text, process_cpu
from modelstream.client.tls import ssl_context_for
from modelstream.client.transports import async_transport
from modelstream.protocols import encode_request

UPSTREAM = "openai-chat"  # what the upstream speaks (bench_load's upstream)
SERVED_MODEL = "load"  # the model id every party serves the upstream's model as
LITELLM_KEY = "sk-bench-litellm-not-secret"  # LiteLLM's master key (it wants the sk- prefix)
LITELLM_VENV = Path(__file__).resolve().parent / ".litellm-venv"
# targets (issue 17, item 7)
LITELLM_SHARE = 1 / 20  # each inbound wire's CPU per event ≤ 1/20 of LiteLLM's
STREAM_RATIO = 1.5  # … and ≤ 1.5 × /v1/stream's on the same stream
TTFE_RATIO = 2.0  # TTFE p99 at 50 unthrottled streams ≤ 2 × the byte relay's
TTFE_STREAMS = 50
RSS_RATIO = 1.5  # RSS after the last round ≤ 1.5 × after the first (rounds of 50 streams)


# --- the wires: a request, its first content event, its end -----------------------------------


def _chat_content(data: Any) -> bool:
    choices = data.get("choices") or [{}]
    return bool((choices[0].get("delta") or {}).get("content"))


def _gemini_content(data: Any) -> bool:
    candidates = data.get("candidates") or [{}]
    parts = (candidates[0].get("content") or {}).get("parts") or []
    return any(part.get("text") for part in parts)


def _stream_content(data: Any) -> bool:
    return any(item.get("type") == "text.delta" for item in data.get("content_items") or [])


@dataclass(frozen=True)
class Wire:
    """How the load client talks to one inbound API: where, what, and what to read."""

    name: str
    protocol: str  # the modelstream protocol of the request body ("modelstream": /v1/stream)
    content: Callable[[Any], bool]  # a parsed `data:` payload carries content (TTFE's event)
    end: bytes  # found in the `data:` line that ends a stream well
    key_header: str  # how the API takes its key

    def request(self, model: str) -> tuple[str, bytes]:
        """The path (with query) and body of one streaming turn of `model`."""
        if self.protocol == "modelstream":
            body = {"model": model, "messages": PROMPT, "config": {}}
            return "/v1/stream", json.dumps(body).encode()
        encoded = encode_request(self.protocol, model, PROMPT)
        return bench_client.BASE_PATHS[self.protocol] + encoded.path, json.dumps(
            encoded.json
        ).encode()

    def headers(self, key: str) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.key_header == "authorization":
            headers["authorization"] = f"Bearer {key}"
        else:
            headers[self.key_header] = key
        if self.protocol == "anthropic-messages":
            headers["anthropic-version"] = "2023-06-01"
        return headers


WIRES = {
    "stream": Wire("stream", "modelstream", _stream_content, b"[DONE]", "authorization"),
    "chat": Wire("chat", "openai-chat", _chat_content, b"[DONE]", "authorization"),
    "responses": Wire(
        "responses",
        "openai-responses",
        lambda d: d.get("type") == "response.output_text.delta",
        b'"response.completed"',
        "authorization",
    ),
    "anthropic": Wire(
        "anthropic",
        "anthropic-messages",
        lambda d: d.get("type") == "content_block_delta",
        b'"message_stop"',
        "x-api-key",
    ),
    "gemini": Wire(
        "gemini", "gemini-generate-content", _gemini_content, b'"finishReason"', "x-goog-api-key"
    ),
}
DEFAULT_WIRES = ("chat", "responses", "anthropic", "gemini", "stream")


# --- the upstream: bench_load's, idle connections kept open longer than a client's pool does --


def serve_upstream(keep_alive_s: int = 300) -> int:
    """The `--upstream` child: `bench_load.serve_upstream`, its uvicorn keeping idle
    connections for `keep_alive_s` instead of 5 s. Here a party idles while the others carry
    their round (LiteLLM's 50 streams take seconds), and httpx's pools, the server's and
    LiteLLM's, keep an idle connection for 5 s too: at the same 5 s the upstream's close races
    the next request on that connection, which then fails (a 502 from the server, a 500 from
    LiteLLM). With the upstream keeping them longer, a pool drops its own first, cleanly."""
    import uvicorn

    config = functools.partial(uvicorn.Config, timeout_keep_alive=keep_alive_s)
    uvicorn.Config = config  # type: ignore[misc, assignment]  # what serve_upstream builds
    return bench_load.serve_upstream()


class Upstream(bench_load.Upstream):
    """bench_load's upstream, as this file's `--upstream` child (above); `queue(count, events,
    pace_ms)` sets the reply of the next requests."""

    def __init__(self) -> None:
        bench_client.ChildEmulator.__init__(self, __file__, "--upstream")


# --- the load client: a child process that runs N streams of one target at once --------------


@dataclass
class StreamRun:
    ttfe: float | None = None  # seconds from the request to the first content event
    frames: int = 0  # `data:` lines but [DONE]
    error: str | None = None


async def one_stream(
    http: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str], wire: Wire
) -> StreamRun:
    """One stream read to its end as raw bytes: `data:` lines counted, each parsed only until
    the first that carries content (its time is the TTFE); the stream must end with the wire's
    end and carry no error line."""
    run = StreamRun()
    content, end = wire.content, wire.end
    tail = b""
    ended = False
    start = time.perf_counter()
    try:
        async with http.stream("POST", url, content=body, headers=headers) as response:
            if response.status_code != 200:
                await response.aread()
                run.error = f"HTTP {response.status_code}: {response.text[:200]}"
                return run
            async for chunk in response.aiter_raw():
                lines = (tail + chunk).split(b"\n")
                tail = lines.pop()
                for line in lines:
                    if not line.startswith(b"data:"):
                        continue
                    payload = line[5:].strip()
                    if payload.startswith(b'{"error"'):
                        run.error = f"error line: {payload[:200].decode(errors='replace')}"
                        return run
                    if end in payload:
                        ended = True
                    if payload == b"[DONE]":
                        continue
                    run.frames += 1
                    if run.ttfe is None and content(orjson.loads(payload)):
                        run.ttfe = time.perf_counter() - start
    except httpx.HTTPError as exc:
        run.error = f"{type(exc).__name__}: {exc}"
        return run
    except (orjson.JSONDecodeError, AttributeError, IndexError, TypeError) as exc:
        run.error = f"an unexpected data line ({type(exc).__name__}: {exc})"
        return run
    if not ended:
        run.error = f"the stream ended without its end after {run.frames} data lines"
    elif run.ttfe is None:
        run.error = f"no content event in {run.frames} data lines"
    return run


async def load(command: dict[str, Any]) -> dict[str, Any]:
    wire = WIRES[command["wire"]]
    path, body = wire.request(command["model"])
    url = command["url"] + path
    headers = wire.headers(command["key"])
    count, ramp = command["count"], command["ramp"]
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    transport = async_transport(ssl_context_for(url), limits)  # bench_load's lean sockets

    async def delayed(i: int) -> StreamRun:
        await asyncio.sleep(ramp * i / count)
        return await one_stream(http, url, body, headers, wire)

    async with httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(120, pool=120)) as http:
        start = time.perf_counter()
        runs = await asyncio.gather(*(delayed(i) for i in range(count)))
        wall = time.perf_counter() - start
    whole = [r for r in runs if r.error is None]
    return {
        "wall": wall,
        "ttfe": [r.ttfe for r in whole],
        "streams": len(whole),
        "frames": sum(r.frames for r in whole),
        "errors": [r.error for r in runs if r.error is not None],
    }


def serve_load() -> int:
    """The `--load` child: each stdin line, a JSON command (url, wire, model, key, count,
    ramp), runs that many streams and prints one JSON line of results."""
    for line in sys.stdin:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            result = runner.run(load(json.loads(line)))
        print(json.dumps(result), flush=True)
    return 0


class LoadClient(bench_load.LoadChild):
    def __init__(self) -> None:
        super().__init__(__file__)

    def run(self, **command: Any) -> dict[str, Any]:
        return self.ask(json.dumps(command))


# --- processes: CPU and RSS of a process and its children ------------------------------------


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants (Linux: /proc/PID/task/TID/children)."""
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return pids


def tree_cpu(pid: int) -> float:
    total = 0.0
    for each in process_tree(pid):
        try:
            total += process_cpu(each)
        except OSError:  # a child that just ended
            continue
    return total


def tree_rss(pid: int) -> int:
    total = 0
    for each in process_tree(pid):
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


# --- LiteLLM: its own venv, offline, as a child ----------------------------------------------


def litellm_binary(venv: Path) -> tuple[Path | None, str]:
    """The `litellm` command of `venv`, installed there first if it is not (`python3 -m venv`,
    `pip install 'litellm[proxy]'`); (None, why) when that fails."""
    binary = venv / "bin" / "litellm"
    if binary.exists():
        return binary, ""
    python3 = shutil.which("python3") or sys.executable
    print(f"installing LiteLLM into {venv} (once; a few minutes) ...", flush=True)
    steps = [
        [python3, "-m", "venv", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "litellm[proxy]"],
    ]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=1800, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"{' '.join(step[-3:])}: {exc}"
        if done.returncode != 0:
            errors = [
                line
                for line in (done.stdout + done.stderr).splitlines()
                if line.strip() and not line.startswith("WARNING: Location")
            ]
            return None, f"{' '.join(step[-3:])} exited {done.returncode}: " + " | ".join(
                errors[-4:]
            )
    if not binary.exists():
        return None, f"pip installed no {binary}"
    return binary, ""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class LiteLLMProxy:
    """`litellm --config FILE --port N` in front of the upstream: one model, `openai/<model>`
    with `api_base` = the upstream; offline (the local cost map), no telemetry, no callbacks,
    no database, access logs off (as our servers run with `--log-level warning`)."""

    def __init__(self, binary: Path, upstream_url: str, folder: Path, timeout: float = 180) -> None:
        config = {
            "model_list": [
                {
                    "model_name": SERVED_MODEL,
                    "litellm_params": {
                        "model": "openai/" + MODELS[UPSTREAM],
                        "api_base": upstream_url + bench_client.BASE_PATHS[UPSTREAM],
                        "api_key": UPSTREAM_KEY,
                        "max_retries": 0,
                    },
                }
            ],
            "litellm_settings": {
                "telemetry": False,
                "callbacks": [],
                "success_callback": [],
                "failure_callback": [],
                "num_retries": 0,
                "request_timeout": 120,
                "set_verbose": False,
            },
            "general_settings": {
                "master_key": LITELLM_KEY,
                "disable_spend_logs": True,
                "store_model_in_db": False,
            },
        }
        path = folder / "litellm.yaml"
        path.write_text(json.dumps(config, indent=1))  # YAML is a superset of JSON
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DATABASE_", "REDIS_", "LITELLM_", "OPENAI_", "VIRTUAL_ENV"))
        }
        env.update(
            LITELLM_LOCAL_MODEL_COST_MAP="True",  # no fetch of the cost map
            LITELLM_LOG="WARNING",  # uvicorn's access log off
            LITELLM_MODE="PRODUCTION",  # no .env loaded
            TELEMETRY="False",
            ANONYMIZED_TELEMETRY="False",
            DISABLE_SCHEMA_UPDATE="True",
            NO_DOCS="True",
            HF_HUB_OFFLINE="1",
        )
        env.pop("PYTHONPATH", None)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [str(binary), "--config", str(path), "--host", "127.0.0.1", "--port"]
        self.log: IO[bytes] = tempfile.TemporaryFile(dir=folder)  # noqa: SIM115 (close())
        self.process = subprocess.Popen(
            [*command, str(self.port)],
            env=env,
            cwd=folder,
            stdout=self.log,
            stderr=self.log,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                if httpx.get(self.url + "/health/liveliness", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        tail = self.output()[-1500:]
        self.close()
        raise RuntimeError(
            f"LiteLLM did not answer /health/liveliness within {timeout:g} s:\n{tail}"
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return log_text(self.log)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


# --- the targets and their figures ------------------------------------------------------------


@dataclass
class Figures:
    """One target at one stream count, over all its rounds."""

    cpu: float = 0.0
    streams: int = 0  # streams carried whole
    frames: int = 0  # `data:` lines those streams received
    ttfe: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rss_before: int = 0
    rss_first: int = 0  # after the first round
    rss_last: int = 0  # after the last round

    def events(self, per_stream: int) -> int:
        """Upstream events relayed: the same denominator for every target and wire."""
        return self.streams * per_stream

    def cpu_us(self, per_stream: int) -> float:
        events = self.events(per_stream)
        return self.cpu / events * 1e6 if events else float("nan")


@dataclass
class Target:
    name: str
    wire: Wire
    url: str
    pid: int
    key: str
    unavailable: str = ""  # why, when the target does not answer whole streams
    figures: dict[int, Figures] = field(default_factory=dict)

    def cpu(self) -> float:
        return tree_cpu(self.pid)

    def rss(self) -> int:
        return tree_rss(self.pid)

    def run(self, client: LoadClient, count: int, ramp: float) -> dict[str, Any]:
        return client.run(
            url=self.url, wire=self.wire.name, model=SERVED_MODEL, key=self.key, count=count,
            ramp=ramp,
        )  # fmt: skip


def floor_target(floor: FloorRelay) -> Target:
    # the byte relay carries a Chat request to the upstream as is (the upstream's key; the
    # upstream answers any model) and its stream back
    return Target("floor", WIRES["chat"], floor.url, floor.process.pid, UPSTREAM_KEY)


def warm(target: Target, client: LoadClient) -> None:
    """Two streams: imports, pools and connections opened; a target that cannot carry them
    whole is marked unavailable with what it answered."""
    result = target.run(client, 2, 0.0)
    if result["errors"]:
        target.unavailable = result["errors"][0]


def run_count(
    targets: list[Target], count: int, args: argparse.Namespace, client: LoadClient, offset: int
) -> None:
    """`args.rounds` rounds of `count` streams through every available target."""
    live = [t for t in targets if not t.unavailable]
    for target in live:
        target.figures[count] = Figures(rss_before=target.rss())
    for round_ in range(args.rounds):
        shift = (round_ + offset) % len(live)
        for target in live[shift:] + live[:shift]:
            before = target.cpu()
            result = target.run(client, count, args.ramp)
            figures = target.figures[count]
            figures.cpu += settled_cpu(target) - before
            figures.streams += result["streams"]
            figures.frames += result["frames"]
            figures.ttfe += result["ttfe"]
            figures.errors += result["errors"]
            if round_ == 0:
                figures.rss_first = target.rss()
        print(f"  {count} streams, round {round_ + 1}/{args.rounds} done", flush=True)
    for target in live:
        target.figures[count].rss_last = target.rss()


def settled_cpu(target: Target, step: float = 0.02, limit: float = 1.0) -> float:
    """The target's CPU once it has finished what its streams left it (a producer's end, a
    proxy's logging tasks): read every `step` seconds until it stops rising (up to `limit`).
    Only the target's own window counts, so its idle ticks while others run do not."""
    cpu = target.cpu()
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        time.sleep(step)
        now = target.cpu()
        if now - cpu < 50e-6:
            return now
        cpu = now
    return cpu


# --- the report --------------------------------------------------------------------------------


def verdict(value: float, bound: float) -> str:
    return f"{value:.2f} ≤{bound:g} {'PASS' if value <= bound else 'FAIL'}"


def report(targets: list[Target], counts: list[int], args: argparse.Namespace) -> int:
    per_stream = args.upstream_events
    by_name = {t.name: t for t in targets}
    status = 0
    pace = "unthrottled" if not args.pace_ms else f"{args.pace_ms:g} ms apart"
    for count in counts:
        print(
            f"\n{count} concurrent streams × {args.rounds} rounds, {args.chunks} text chunks "
            f"({per_stream} upstream events) per stream, {pace}"
        )
        print(
            f"{'target':10} {'events':>8} {'cpu µs/ev':>9} {'×stream':>7} {'×litellm':>8} "
            f"{'ttfe p50':>8} {'p99':>7} {'×floor':>6} {'lines/st':>8} {'errors':>6} "
            f"{'rss MB before → 1st → last':>26}"
        )
        nan = float("nan")
        base = {
            name: figures
            for name in ("floor", "stream", "litellm")
            if name in by_name and (figures := by_name[name].figures.get(count)) is not None
        }
        stream_us = base["stream"].cpu_us(per_stream) if "stream" in base else nan
        litellm_us = base["litellm"].cpu_us(per_stream) if "litellm" in base else nan
        floor_p99 = percentile(base["floor"].ttfe, 99) if "floor" in base else nan
        checks: list[str] = []
        for target in targets:
            figures = target.figures.get(count)
            if figures is None:
                print(f"{target.name:10} unavailable: {target.unavailable[:110]}")
                continue
            cpu_us = figures.cpu_us(per_stream)
            p99 = percentile(figures.ttfe, 99)
            lines = figures.frames / figures.streams if figures.streams else float("nan")
            print(
                f"{target.name:10} {figures.events(per_stream):8,d} {cpu_us:9.1f} "
                f"{cpu_us / stream_us:7.2f} {cpu_us / litellm_us:8.3f} "
                f"{percentile(figures.ttfe, 50) * 1e3:6.1f}ms {p99 * 1e3:5.1f}ms "
                f"{p99 / floor_p99:6.2f} {lines:8.1f} {len(figures.errors):6d} "
                f"{figures.rss_before / 2**20:8.0f} → {figures.rss_first / 2**20:4.0f} → "
                f"{figures.rss_last / 2**20:4.0f}"
            )
            if target.name in ("floor", "litellm"):
                continue
            parts = []
            if figures.errors:
                parts.append(f"errors {len(figures.errors)} ≤0 FAIL")
            if litellm_us == litellm_us:  # LiteLLM measured
                parts.append("cpu/litellm " + verdict(cpu_us / litellm_us, LITELLM_SHARE))
            if target.name != "stream" and stream_us == stream_us:
                parts.append("cpu/stream " + verdict(cpu_us / stream_us, STREAM_RATIO))
            if count >= TTFE_STREAMS and not args.pace_ms and floor_p99 == floor_p99:
                parts.append("ttfe p99/floor " + verdict(p99 / floor_p99, TTFE_RATIO))
            if count >= TTFE_STREAMS and args.rounds >= 2 and figures.rss_first:
                ratio = figures.rss_last / figures.rss_first
                parts.append(f"rss last/1st ({args.rounds} rounds) " + verdict(ratio, RSS_RATIO))
            if parts:
                checks.append(f"  {target.name:10} " + "; ".join(parts))
                if any(part.endswith("FAIL") for part in parts):
                    status = 1
        if checks:
            print("targets:")
            print("\n".join(checks))
        for target in targets:
            figures = target.figures.get(count)
            if figures is not None and figures.errors:
                kinds: dict[str, int] = {}
                for error in figures.errors:
                    kinds[error[:120]] = kinds.get(error[:120], 0) + 1
                print(f"{target.name} errors:")
                for text, n in sorted(kinds.items(), key=lambda item: -item[1])[:3]:
                    print(f"  {n} × {text}")
    print(
        "\ncpu µs/ev: the target process's CPU (all threads and children, /proc) from just "
        "before each of its runs until it settled after, summed over the rounds, over the "
        "upstream events of the streams it carried whole; ×stream, ×litellm: against "
        "/v1/stream's and LiteLLM's in this run; ttfe: request sent → first "
        "data line carrying content; ×floor: p99 over the byte relay's; lines/st: data lines "
        "a stream received (each wire frames the same events its own way)"
    )
    return status


# --- main ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="1,50", help="concurrent streams, e.g. 1,50")
    parser.add_argument("--rounds", type=int, default=10, help="rounds per stream count")
    parser.add_argument(
        "--wires", default=",".join(DEFAULT_WIRES), help="inbound wires: " + ",".join(WIRES)
    )
    parser.add_argument("--no-litellm", action="store_true", help="skip LiteLLM")
    parser.add_argument(
        "--litellm-venv", type=Path, default=LITELLM_VENV, help="LiteLLM's venv (made if missing)"
    )
    parser.add_argument("--chunks", type=int, default=100, help="text chunks per stream")
    parser.add_argument(
        "--pace-ms", type=float, default=0.0, help="ms between upstream chunks (0: unthrottled)"
    )
    parser.add_argument(
        "--ramp-s",
        type=float,
        dest="ramp",
        help="start each round's streams evenly over this many seconds (default: chunks × "
        "pace, bench_load's; 0 when unthrottled: all at once)",
    )
    parser.add_argument("--load", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.load:
        return serve_load()
    if args.upstream:
        return serve_upstream()
    if args.ramp is None:
        args.ramp = args.chunks * args.pace_ms / 1000
    counts = [int(n) for n in args.streams.split(",") if n]
    wires = [w for w in args.wires.split(",") if w]
    if not counts or args.rounds < 1 or not wires or any(w not in WIRES for w in wires):
        parser.error(f"--streams, --rounds ≥ 1, --wires among {','.join(WIRES)}")
    body = body_of(args.chunks)
    args.upstream_events = sum(1 for frame in body.split(b"\n\n") if frame.startswith(b"data: {"))
    print(
        f"modelstream gateway benchmark — Python {platform.python_version()}, {UPSTREAM} "
        f"upstream, {args.chunks} text chunks per stream, pace {args.pace_ms:g} ms; load "
        f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    binary: Path | None = None
    if not args.no_litellm:
        binary, why = litellm_binary(args.litellm_venv)
        if binary is None:
            print(f"LiteLLM: not installed, runs without it: {why}", flush=True)

    upstream = client = floor = None
    servers: list[RelayServer] = []
    litellm: LiteLLMProxy | None = None
    targets: list[Target] = []
    with tempfile.TemporaryDirectory(prefix="bench-gateway-") as tmp:
        try:
            upstream = Upstream()
            upstream.queue(1, args.chunks, args.pace_ms)
            client = LoadClient()
            floor = FloorRelay(upstream.url)
            targets.append(floor_target(floor))
            limit = {"max_concurrent_streams": max(counts) + 16}
            for wire in wires:
                folder = Path(tmp) / wire
                folder.mkdir()
                server = RelayServer(
                    upstream.url, folder, False, served={UPSTREAM: SERVED_MODEL}, limits=limit
                )
                servers.append(server)
                targets.append(Target(wire, WIRES[wire], server.url, server.pid, SERVER_KEY))
            if binary is not None:
                try:
                    litellm = LiteLLMProxy(binary, upstream.url, Path(tmp))
                    targets.append(
                        Target("litellm", WIRES["chat"], litellm.url, litellm.pid, LITELLM_KEY)
                    )
                except RuntimeError as exc:
                    print(f"LiteLLM: did not start, runs without it: {exc}", flush=True)
            for target in targets:
                warm(target, client)
                if target.unavailable:
                    print(f"  {target.name}: unavailable: {target.unavailable[:200]}", flush=True)
            if targets[0].unavailable:
                raise RuntimeError(f"the byte relay failed: {targets[0].unavailable}")
            for index, count in enumerate(counts):
                run_count(targets, count, args, client, index)
            died = [
                f"the {name} server died:\n{server.output()[-2000:]}"
                for name, server in zip(wires, servers, strict=True)
                if server.process.poll() is not None
            ]
        except RuntimeError as exc:
            print(f"FAILED: {exc}", file=sys.stderr)
            return 2
        finally:
            for server in servers:
                server.close()
            if litellm is not None:
                litellm.close()
            if client is not None:
                client.close()
            if floor is not None:
                floor.close()
            if upstream is not None:
                upstream.close()
    status = report(targets, counts, args)
    for text in died:
        print(f"FAILED: {text}", file=sys.stderr)
    return 2 if died else status


if __name__ == "__main__":
    sys.exit(main())
