"""The model catalogue: what a model is, where it is served and what it costs (docs/models.md).

The data is `models.toml` in this package, reviewed like code; a file of the user's own
(`MODELSTREAM_MODELS`, paths separated by the OS path separator, or `load_catalogue(paths)`)
adds entries and overrides fields of ours. Lookup takes the ids people actually send: the
catalogue id in any case, a dated snapshot of it (`-2025-08-07`, `-20250929`, `@20250929`), an
alias the vendor answers, and the Bedrock and Vertex ids (with a cross-region inference-profile
prefix or as an ARN).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..bounded_json import MAX_DEPTH, JSONTooDeepError, loads_toml
from ..errors import ConfigurationError

__all__ = [
    "Catalogue",
    "CatalogueError",
    "LongPrompt",
    "ModelInfo",
    "Peak",
    "Price",
    "default_catalogue",
    "env_files",
    "load_catalogue",
]

ENV_FILES = "MODELSTREAM_MODELS"
_RATE_FIELDS = ("input", "cached_input", "cache_write", "output", "reasoning")
_MODEL_FIELDS = {
    "provider", "protocols", "platforms", "bedrock_ids", "vertex_ids", "aliases",
    "context_window", "max_output", "input", "output", "thinks", "price",
}  # fmt: skip
_PRICE_FIELDS = {*_RATE_FIELDS, "currency", "as_of", "source", "checked_via", "long_prompt", "peak"}
# a dated snapshot of a catalogue id: gpt-5-2025-08-07, claude-sonnet-4-5-20250929, ...@20250929
_SNAPSHOT = re.compile(r"(?:-\d{4}-\d{2}-\d{2}|[-@]\d{8})(?:-v\d+(?::\d+)?)?$")
# a Bedrock cross-region inference profile: us.anthropic..., global.anthropic..., us-gov....
_PROFILE = re.compile(r"^(?:us|us-gov|eu|apac|jp|au|ca|global)\.(?=[a-z0-9-]+\.)")


class CatalogueError(ConfigurationError):
    """A catalogue file is missing, unreadable or has a wrong entry; the message says where."""


@dataclass(frozen=True)
class LongPrompt:
    """The rates for every token of a request whose input exceeds `threshold` tokens."""

    threshold: int
    rates: Mapping[str, Decimal]


@dataclass(frozen=True)
class Peak:
    """Hours (UTC, [start, end) pairs) on some weekdays (1 = Monday) when rates are multiplied."""

    hours_utc: tuple[tuple[int, int], ...]
    weekdays: tuple[int, ...]
    multiplier: Decimal


@dataclass(frozen=True)
class Price:
    """List prices per million tokens; a rate left out is unknown (never zero)."""

    currency: str
    rates: Mapping[str, Decimal]  # input, cached_input, cache_write, output, reasoning
    as_of: date
    source: str
    checked_via: str | None = None
    long_prompt: LongPrompt | None = None
    peak: Peak | None = None

    def rate(self, name: str) -> Decimal | None:
        return self.rates.get(name)


@dataclass(frozen=True)
class ModelInfo:
    """One catalogue entry."""

    id: str
    provider: str
    protocols: tuple[str, ...]
    input: tuple[str, ...]
    output: tuple[str, ...]
    thinks: bool
    platforms: tuple[str, ...] = ()
    bedrock_ids: tuple[str, ...] = ()
    vertex_ids: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    context_window: int | None = None
    max_output: int | None = None
    price: Price | None = None

    def as_json(self) -> dict[str, Any]:
        """The entry as plain JSON values (prices as strings, exactly as written)."""
        out: dict[str, Any] = {
            "id": self.id,
            "provider": self.provider,
            "protocols": list(self.protocols),
            "platforms": list(self.platforms),
            "context_window": self.context_window,
            "max_output": self.max_output,
            "input": list(self.input),
            "output": list(self.output),
            "thinks": self.thinks,
            "price": None,
        }
        for key in ("bedrock_ids", "vertex_ids", "aliases"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        if self.price is not None:
            price = self.price
            out["price"] = {
                "currency": price.currency,
                **{name: str(value) for name, value in price.rates.items()},
                "as_of": price.as_of.isoformat(),
                "source": price.source,
            }
            if price.long_prompt is not None:
                out["price"]["long_prompt"] = {
                    "threshold": price.long_prompt.threshold,
                    **{k: str(v) for k, v in price.long_prompt.rates.items()},
                }
        return out


@dataclass
class Catalogue:
    """Entries by id, with the lookup index of every id that names one."""

    models: dict[str, ModelInfo] = field(default_factory=dict)
    _index: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._reindex()

    def __iter__(self) -> Iterator[ModelInfo]:
        return iter(self.models.values())

    def __len__(self) -> int:
        return len(self.models)

    def lookup(self, model: str) -> ModelInfo | None:
        """The entry a model id names, or None for a model the catalogue does not know."""
        for candidate in _candidates(model):
            key = self._index.get(candidate.lower())
            if key is not None:
                return self.models[key]
        return None

    def _reindex(self) -> None:
        self._index = {}
        for entry in self.models.values():
            for name in (entry.id, *entry.aliases, *entry.bedrock_ids, *entry.vertex_ids):
                self._index.setdefault(name.lower(), entry.id)


def _candidates(model: str) -> Iterator[str]:
    """The model id as sent, then without what a platform or a snapshot adds to it."""
    name = model.strip()
    if name.startswith("arn:"):  # ...:foundation-model/anthropic.claude-... or ...profile/us.x
        name = name.rsplit("/", 1)[-1]
    yield name
    bare = _PROFILE.sub("", name)
    if bare != name:
        yield bare
    base = _SNAPSHOT.sub("", bare)
    if base != bare:
        yield base


@cache
def default_catalogue() -> Catalogue:
    """Ours, plus the files named by MODELSTREAM_MODELS (read once per process)."""
    return load_catalogue(env_files())


def env_files() -> list[str]:
    """The files MODELSTREAM_MODELS names, in order."""
    return [p for p in os.environ.get(ENV_FILES, "").split(os.pathsep) if p]


def load_catalogue(paths: Iterable[str | Path] = (), *, builtin: bool = True) -> Catalogue:
    """Our catalogue (unless `builtin=False`) with each file's entries added in order: a known
    id gets the fields the file gives (a `price` table replaces ours whole), a new id is added.
    Raises `CatalogueError` naming the file and the entry: a wrong field (a price that is not a
    finite number included), or a file that is not UTF-8 text or nests past `MAX_DEPTH`."""
    raw: dict[str, dict[str, Any]] = {}
    ids: dict[str, str] = {}  # lower-cased id -> the id in `raw`: one lookup per merged entry
    if builtin:
        text = resources.files(__package__).joinpath("models.toml").read_text("utf-8")
        _merge(raw, ids, _parse(text, "modelstream/catalogue/models.toml"))
    for path in paths:
        _merge(raw, ids, _parse(_read(Path(path)), str(path)))
    models: dict[str, ModelInfo] = {}
    for model_id, fields in raw.items():
        where = fields.pop("__where__", "the catalogue")
        models[model_id] = _entry(model_id, fields, where)
    return Catalogue(models)


def _client_types() -> tuple[str, ...]:
    from ..protocols import CLIENT_TYPES  # the registry loads every protocol: only when needed

    return CLIENT_TYPES


def _platforms(fields: Mapping[str, Any], at: str) -> tuple[str, ...]:
    """The entry's platforms: names in the platform registry."""
    from ..platforms import REGISTRY, listed  # it loads every protocol: only when needed

    platforms = _texts(fields, "platforms", at)
    if not set(platforms) <= set(REGISTRY):
        raise CatalogueError(f"{at}.platforms may hold {listed(REGISTRY, 'and')} only")
    return platforms


def _read(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogueError(f"{path}: cannot read the model file: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CatalogueError(
            f"{path} is not a UTF-8 text file: a model file is TOML text"
        ) from None


def _parse(text: str, where: str) -> dict[str, dict[str, Any]]:
    try:
        data = loads_toml(text)
    except JSONTooDeepError:
        raise CatalogueError(
            f"{where}: the file nests tables and arrays more than {MAX_DEPTH} levels deep, "
            "the limit; no model entry needs that many"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{where}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"models"})
    if unknown:
        raise CatalogueError(f"{where}: unknown top-level table(s) {', '.join(unknown)}")
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise CatalogueError(f"{where}: 'models' must be a table of [models.\"id\"] tables")
    for model_id, fields in models.items():
        if not isinstance(fields, dict):
            raise CatalogueError(f'{where}: [models."{model_id}"] must be a table')
        fields["__where__"] = where
    return models


def _merge(
    raw: dict[str, dict[str, Any]], ids: dict[str, str], new: dict[str, dict[str, Any]]
) -> None:
    """Add `new`'s entries to `raw`: an id already there in any case gets the fields given."""
    for model_id, fields in new.items():
        known = ids.setdefault(model_id.lower(), model_id)
        raw[known] = {**raw[known], **fields} if known in raw else fields


def _entry(model_id: str, fields: dict[str, Any], where: str) -> ModelInfo:
    at = f'{where}: [models."{model_id}"]'
    unknown = sorted(set(fields) - _MODEL_FIELDS)
    if unknown:
        raise CatalogueError(f"{at} has unknown field(s) {', '.join(unknown)}")
    protocols = _texts(fields, "protocols", at, required=True)
    unknown_protocols = sorted(set(protocols) - set(_client_types()))
    if unknown_protocols:
        raise CatalogueError(
            f"{at}.protocols names no protocol: {', '.join(unknown_protocols)} "
            f"(known: {', '.join(_client_types())})"
        )
    platforms = _platforms(fields, at)
    try:
        return ModelInfo(
            id=model_id,
            provider=_text(fields, "provider", at),
            protocols=protocols,
            input=_texts(fields, "input", at, required=True),
            output=_texts(fields, "output", at, required=True),
            thinks=_flag(fields, "thinks", at),
            platforms=platforms,
            bedrock_ids=_texts(fields, "bedrock_ids", at),
            vertex_ids=_texts(fields, "vertex_ids", at),
            aliases=_texts(fields, "aliases", at),
            context_window=_count(fields, "context_window", at),
            max_output=_count(fields, "max_output", at),
            price=_price(fields["price"], at) if "price" in fields else None,
        )
    except (TypeError, ValueError) as exc:
        raise CatalogueError(f"{at}: {exc}") from None


def _price(raw: Any, at: str) -> Price:
    at = f"{at}.price"
    if not isinstance(raw, dict):
        raise CatalogueError(f"{at} must be a table")
    unknown = sorted(set(raw) - _PRICE_FIELDS)
    if unknown:
        raise CatalogueError(f"{at} has unknown field(s) {', '.join(unknown)}")
    as_of = raw.get("as_of")
    if not isinstance(as_of, date):
        raise CatalogueError(f"{at}.as_of must be a date (as_of = 2026-12-01)")
    source = raw.get("source")
    if not isinstance(source, str) or not source.startswith("https://"):
        raise CatalogueError(f"{at}.source must be the https:// page the prices are read from")
    checked_via = raw.get("checked_via")
    if checked_via is not None and not isinstance(checked_via, str):
        raise CatalogueError(f"{at}.checked_via must be a URL")
    long_prompt = None
    if "long_prompt" in raw:
        tier = raw["long_prompt"]
        if not isinstance(tier, dict):
            raise CatalogueError(f"{at}.long_prompt must be a table")
        threshold = _count(tier, "threshold", f"{at}.long_prompt")
        if threshold is None:
            raise CatalogueError(f"{at}.long_prompt.threshold is required (input tokens)")
        extra = sorted(set(tier) - {*_RATE_FIELDS, "threshold"})
        if extra:
            raise CatalogueError(f"{at}.long_prompt has unknown field(s) {', '.join(extra)}")
        long_prompt = LongPrompt(threshold, _rates(tier, f"{at}.long_prompt"))
    return Price(
        currency=_text(raw, "currency", at),
        rates=_rates(raw, at),
        as_of=as_of,
        source=source,
        checked_via=checked_via,
        long_prompt=long_prompt,
        peak=_peak(raw["peak"], f"{at}.peak") if "peak" in raw else None,
    )


def _peak(raw: Any, at: str) -> Peak:
    if not isinstance(raw, dict):
        raise CatalogueError(f"{at} must be a table")
    hours = raw.get("hours_utc")
    if not isinstance(hours, list) or not all(
        isinstance(h, list)
        and len(h) == 2
        and all(isinstance(x, int) for x in h)
        and 0 <= h[0] < h[1] <= 24
        for h in hours
    ):
        raise CatalogueError(f"{at}.hours_utc must be [start, end] hour pairs, e.g. [[1, 4]]")
    weekdays = raw.get("weekdays", [1, 2, 3, 4, 5, 6, 7])
    if not isinstance(weekdays, list) or not all(
        isinstance(d, int) and 1 <= d <= 7 for d in weekdays
    ):
        raise CatalogueError(f"{at}.weekdays must be ISO weekday numbers (1 = Monday)")
    multiplier = _decimal(raw.get("multiplier"), f"{at}.multiplier")
    return Peak(tuple((h[0], h[1]) for h in hours), tuple(weekdays), multiplier)


def _rates(raw: Mapping[str, Any], at: str) -> dict[str, Decimal]:
    return {name: _decimal(raw[name], f"{at}.{name}") for name in _RATE_FIELDS if name in raw}


def _decimal(value: Any, at: str) -> Decimal:
    # str() of a TOML float is its shortest repr: 0.075 stays exactly 0.075
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CatalogueError(f"{at} must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):  # TOML has nan and inf literals
        raise CatalogueError(f"{at} must be a finite number, got {value!r}")
    if value < 0:
        raise CatalogueError(f"{at} must not be negative, got {value!r}")
    return Decimal(str(value))


def _text(raw: Mapping[str, Any], key: str, at: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise CatalogueError(f"{at}.{key} must be a non-empty string")
    return value


def _texts(raw: Mapping[str, Any], key: str, at: str, *, required: bool = False) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CatalogueError(f"{at}.{key} must be a list of strings")
    if required and not value:
        raise CatalogueError(f"{at}.{key} must not be empty")
    return tuple(value)


def _count(raw: Mapping[str, Any], key: str, at: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise CatalogueError(f"{at}.{key} must be a positive integer, got {value!r}")
    return value


def _flag(raw: Mapping[str, Any], key: str, at: str) -> bool:
    value = raw.get(key)
    if not isinstance(value, bool):
        raise CatalogueError(f"{at}.{key} must be true or false")
    return value
