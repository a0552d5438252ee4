"""A virtual key as a plain value (`KeyRecord`), and the rules its fields follow: one checker
for the admin API's JSON and the command line's flags, so both refuse the same things with the
same messages. The key's secret is not part of the record (secrets.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from .money import MAX_BUDGET
from .times import parse_instant
from .windows import PERIOD_NAMES, Period

DEFAULT_CURRENCY = "USD"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@:+ -]{0,127}")
_MODEL = re.compile(r"[A-Za-z0-9._:/@+-]{1,128}")  # a server_model_id (docs/server.md)
_CURRENCY = re.compile(r"[A-Z]{3}")
MAX_METADATA_ENTRIES = 32
MAX_METADATA_KEY = 64
MAX_METADATA_VALUE = 512
MIN_PERIOD_SECONDS = 60

# what `update` may change; `create` also takes `currency`, fixed from then on (a spend in one
# currency cannot be compared with a budget in another)
CHANGEABLE = (
    "name",
    "models",
    "rpm",
    "tpm",
    "budget",
    "budget_period",
    "expires_at",
    "metadata",
)
CREATABLE = (*CHANGEABLE, "currency")


class KeyFieldError(ValueError):
    """A field of a key that breaks its rule; the message names the field and the rule."""


@dataclass(frozen=True)
class KeyRecord:
    """A virtual key, without its secret: who it is, what it may use, and its limits.

    `models` empty: every served model. `rpm`/`tpm`/`budget` None: no limit of that kind.
    Times are Unix seconds."""

    key_id: str
    name: str
    created_at: float
    models: tuple[str, ...] = ()
    rpm: int | None = None
    tpm: int | None = None
    budget: Decimal | None = None
    currency: str = DEFAULT_CURRENCY
    budget_period: Period | None = None
    expires_at: float | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    revoked_at: float | None = None

    def status(self, now: float) -> str:
        """`active`, `revoked` or `expired` at `now`."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and now >= self.expires_at:
            return "expired"
        return "active"

    def allows(self, served_model: str) -> bool:
        return not self.models or served_model in self.models

    def changed(self, changes: Mapping[str, Any]) -> KeyRecord:
        """This record with `changes` (checked by `checked_fields`) applied."""
        values = dict(changes)
        if "models" in values:
            values["models"] = tuple(values["models"])
        return replace(self, **values)

    def to_json(self) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "name": self.name,
            "models": list(self.models),
            "rpm": self.rpm,
            "tpm": self.tpm,
            "budget": None if self.budget is None else str(self.budget),
            "currency": self.currency,
            "budget_period": self.budget_period,
            "expires_at": self.expires_at,
            "metadata": dict(self.metadata),
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KeyRecord:
        budget = data.get("budget")
        return cls(
            key_id=data["key_id"],
            name=data["name"],
            created_at=data["created_at"],
            models=tuple(data.get("models") or ()),
            rpm=data.get("rpm"),
            tpm=data.get("tpm"),
            budget=None if budget is None else Decimal(budget),
            currency=data.get("currency") or DEFAULT_CURRENCY,
            budget_period=data.get("budget_period"),
            expires_at=data.get("expires_at"),
            metadata=dict(data.get("metadata") or {}),
            revoked_at=data.get("revoked_at"),
        )


def checked_fields(values: Mapping[str, Any], *, creating: bool) -> dict[str, Any]:
    """`values` (from JSON or flags) as a record's fields, each checked; raises `KeyFieldError`
    naming the first field that breaks its rule, or the fields that are not known."""
    known = CREATABLE if creating else CHANGEABLE
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise KeyFieldError(
            f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"the known fields are {', '.join(known)}"
        )
    if creating and "name" not in values:
        raise KeyFieldError("a key needs a 'name': who or what it is for (unique)")
    checked: dict[str, Any] = {}
    for name, value in values.items():
        checked[name] = _CHECKS[name](value)
    return checked


def _name(value: Any) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise KeyFieldError(
            "'name' must be 1 to 128 letters, digits, spaces or ._@:+- starting with a letter "
            f"or digit, got {value!r}"
        )
    if value.startswith("vk_"):
        raise KeyFieldError(f"'name' must not start with 'vk_', the prefix of key ids: {value!r}")
    return value


def _models(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(m, str) for m in value):
        raise KeyFieldError(f"'models' must be a list of served model ids, got {value!r}")
    bad = [m for m in value if not _MODEL.fullmatch(m)]
    if bad:
        raise KeyFieldError(f"'models' holds {bad[0]!r}, which is not a served model id")
    return tuple(dict.fromkeys(value))


def _limit(name: str) -> Any:
    def check(value: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise KeyFieldError(f"'{name}' must be a whole number of at least 1, or null")
        return value

    return check


def _budget(value: Any) -> Decimal | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float | Decimal):
        raise KeyFieldError(f"'budget' must be an amount such as \"10.00\", got {value!r}")
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise KeyFieldError(
            f"'budget' must be an amount such as \"10.00\", got {value!r}"
        ) from None
    if not amount.is_finite() or amount < 0 or amount > MAX_BUDGET:
        raise KeyFieldError(f"'budget' must be between 0 and {MAX_BUDGET}, got {value!r}")
    return amount


def _period(value: Any) -> Period | None:
    if value is None or value in PERIOD_NAMES:
        return value  # type: ignore[no-any-return]
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= MIN_PERIOD_SECONDS:
        return value
    raise KeyFieldError(
        f"'budget_period' must be daily, weekly, monthly, a number of seconds (at least "
        f"{MIN_PERIOD_SECONDS}) or null, got {value!r}"
    )


def _expires_at(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return parse_instant(value)
    except ValueError as exc:
        raise KeyFieldError(f"'expires_at': {exc}") from None


def _metadata(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise KeyFieldError(f"'metadata' must map strings to strings, got {value!r}")
    if len(value) > MAX_METADATA_ENTRIES:
        raise KeyFieldError(f"'metadata' holds more than {MAX_METADATA_ENTRIES} entries")
    for key, text in value.items():
        if not key or len(key) > MAX_METADATA_KEY or len(text) > MAX_METADATA_VALUE:
            raise KeyFieldError(
                f"'metadata' keys are 1 to {MAX_METADATA_KEY} characters and values at most "
                f"{MAX_METADATA_VALUE}; {key[:MAX_METADATA_KEY]!r} is not"
            )
    return dict(value)


def _currency(value: Any) -> str:
    if not isinstance(value, str) or not _CURRENCY.fullmatch(value):
        raise KeyFieldError(f"'currency' must be a three-letter code such as USD, got {value!r}")
    return value


_CHECKS = {
    "name": _name,
    "models": _models,
    "rpm": _limit("rpm"),
    "tpm": _limit("tpm"),
    "budget": _budget,
    "budget_period": _period,
    "expires_at": _expires_at,
    "metadata": _metadata,
    "currency": _currency,
}
