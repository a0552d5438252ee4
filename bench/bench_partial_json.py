"""Incremental JSON: `PartialJSON` fed a streamed answer against re-parsing the prefix with jiter.

A model's 100k-character JSON answer (an object with a list of 500 records, each with strings,
numbers, booleans, a null now and then and a nested object, plus one long text field) arrives in
20,000 fragments of about five characters. Ours: a `PartialJSON` fed every fragment, `value`
read after each. The baseline, measured in the same run: what a consumer without an incremental
parser does, keep the text and parse the cumulative prefix with
`jiter.from_json(prefix.encode(), partial_mode="trailing-strings")` once every 100 fragments
(200 parses). Both are timed with `time.process_time`, interleaved, best of several runs; every
run is checked (ours: the final value equals `json.loads` of the text; the baseline: its last
parse too), so a broken parser cannot look fast.

Target (the issue's): ours ≤ 2.0 × the baseline. Ours does 100× as many updates as the
baseline, and its cost must stay linear: 8 × the text (and fragments) costs at most 9 × the time.

    .venv/bin/python bench/bench_partial_json.py            # full run
    .venv/bin/python bench/bench_partial_json.py --quick    # smoke run: 3 reps
    .venv/bin/python bench/bench_partial_json.py --profile  # cProfile of ours

Exit status: 0 all targets met, 1 a target missed, 2 a wrong result.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import itertools
import json
import pstats
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import jiter

from modelstream.structured.partial_json import PartialJSON

RATIO_TARGET = 2.0
SCALE = 8
SCALE_TARGET = 9.0
CHARS = 100_000
FRAGMENTS = 20_000
BASELINE_EVERY = 100  # fragments between two baseline parses

WORDS = [
    "the",
    "a",
    "model",
    "stream",
    "token",
    "value",
    "parser",
    "answer",
    "record",
    "field",
    "nested",
    "object",
    "list",
    "of",
    "with",
    "and",
    "to",
    "in",
    "for",
    "is",
    "on",
    "at",
    "by",
    "from",
    "café",
    "naïve",
    "über",
    "東京",
    "emoji",
    "🙂",
    '"quoted"',
    "back\\slash",
    "tab\tnew\nline",
]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def build(chars: int, seed: int = 7) -> str:
    """A realistic answer of about `chars` characters: 500 records (per 100k) and a long text."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    answer: dict[str, Any] = {"title": sentence(rng, 8), "records": records, "summary": ""}
    text = json.dumps(answer, ensure_ascii=False)
    target_records = chars * 4 // 5
    while len(text) < target_records:
        record = {
            "id": len(records) + 1,
            "name": sentence(rng, rng.randint(1, 2)),
            "score": round(rng.uniform(-100, 100), rng.randint(0, 6)),
            "active": rng.random() < 0.5,
            "tags": [rng.choice(WORDS) for _ in range(rng.randint(0, 2))],
            "meta": {
                "created": f"2025-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}",
                "count": rng.randint(0, 10**6),
                "ratio": None if rng.random() < 0.2 else rng.random(),
            },
            "note": sentence(rng, rng.randint(0, 2)),
        }
        records.append(record)
        text += json.dumps(record, ensure_ascii=False) + ", "
    summary: list[str] = []
    size = len(json.dumps(answer, ensure_ascii=False))
    while size < chars:
        words = sentence(rng, 10)
        summary.append(words)
        size += len(json.dumps(words, ensure_ascii=False)) - 1
    answer["summary"] = " ".join(summary)
    return json.dumps(answer, ensure_ascii=False)


def split(text: str, fragments: int, seed: int = 11) -> list[str]:
    """`text` in `fragments` pieces cut at random places (about len/fragments characters each)."""
    cuts = sorted(random.Random(seed).sample(range(1, len(text)), fragments - 1))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


# --- the two things timed --------------------------------------------------------------------


def ours(fragments: list[str]) -> Any:
    """Feed every fragment and read the value after each, as a streaming consumer does."""
    parser = PartialJSON()
    feed = parser.feed
    value: Any = None
    for fragment in fragments:
        feed(fragment)
        value = parser.value
    assert value is parser.value
    return parser.finish()


def baseline(fragments: list[str]) -> Any:
    """Keep the text; parse the cumulative prefix with jiter's partial mode every 100 fragments."""
    from_json = jiter.from_json
    buffer = ""
    value: Any = None
    for start in range(0, len(fragments), BASELINE_EVERY):
        buffer += "".join(fragments[start : start + BASELINE_EVERY])
        value = from_json(buffer.encode(), partial_mode="trailing-strings")
    return value


def cpu_seconds(run: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.process_time()
    result = run()
    return time.process_time() - start, result


# --- report ----------------------------------------------------------------------------------


def measure(chars: int, fragments: int, reps: int) -> tuple[float, float, str | None]:
    text = build(chars)
    pieces = split(text, fragments)
    expected = json.loads(text)
    best_ours = best_base = float("inf")
    for _ in range(reps):
        seconds, value = cpu_seconds(lambda: ours(pieces))
        if value != expected:
            return best_ours, best_base, "PartialJSON's final value differs from json.loads"
        best_ours = min(best_ours, seconds)
        seconds, value = cpu_seconds(lambda: baseline(pieces))
        if value != expected:
            return best_ours, best_base, "jiter's last parse differs from json.loads"
        best_base = min(best_base, seconds)
    return best_ours, best_base, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 reps")
    parser.add_argument("--reps", type=int, help="timed repetitions (default 5, quick 3)")
    parser.add_argument("--profile", action="store_true", help="cProfile one run of ours")
    args = parser.parse_args(argv)
    reps = args.reps or (3 if args.quick else 5)

    text = build(CHARS)
    pieces = split(text, FRAGMENTS)
    print(
        f"partial JSON: {len(text):,} characters in {len(pieces):,} fragments "
        f"(~{len(text) / len(pieces):.1f} characters each), best of {reps}, "
        f"Python {sys.version.split()[0]}, jiter {jiter.__version__}"
    )
    status = 0
    mine, base, problem = measure(CHARS, FRAGMENTS, reps)
    if problem is not None:
        print(f"WRONG RESULT: {problem}")
        return 2
    ratio = mine / base
    ok = ratio <= RATIO_TARGET
    status = status or (0 if ok else 1)
    print(
        f"  ours (every fragment, value read each time) {mine * 1e3:7.1f} ms  "
        f"{mine / FRAGMENTS * 1e6:5.2f} µs/fragment"
    )
    print(
        f"  jiter (prefix every {BASELINE_EVERY} fragments, "
        f"{FRAGMENTS // BASELINE_EVERY} parses)  {base * 1e3:7.1f} ms"
    )
    print(f"  ratio {ratio:.2f}  target ≤{RATIO_TARGET:.1f}  {'PASS' if ok else 'FAIL'}")

    small, _, problem = measure(CHARS // SCALE, FRAGMENTS // SCALE, reps)
    if problem is not None:
        print(f"WRONG RESULT: {problem}")
        return 2
    scale = mine / small
    ok = scale <= SCALE_TARGET
    status = status or (0 if ok else 1)
    print(
        f"linearity: {SCALE}× the text costs ×{scale:.2f} the time  "
        f"target ≤{SCALE_TARGET:.0f}  {'PASS' if ok else 'FAIL'}"
    )

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        ours(pieces)
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(15)
    return status


if __name__ == "__main__":
    sys.exit(main())
