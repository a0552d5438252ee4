"""The registry: every cloud platform modelstream reaches, by name, as one `PlatformUnit`.

The client, server, CLI and catalogue read this registry; no other table names a platform.
Adding a platform is writing its module (docs/adding-a-platform.md) and adding its line below.

A registry is an immutable mapping, name -> unit. The lookups take it as `registry=` (the
default: `REGISTRY`), so a test that needs one more platform builds its own with
`registry_of(*REGISTRY.values(), unit)`: nothing global changes. A settings value knows its
unit (`Vertex(...).unit`), so a client given one needs no registry at all.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypeGuard

from ..errors import ConfigurationError
from ..protocols.descriptor import Provider
from .descriptor import AmbientCredentials, PlatformSettings, PlatformUnit

# one line per platform: the module under modelstream/platforms/ that defines its PLATFORM
_MODULES = (
    "bedrock",
    "vertex",
    "azure",
)

Platforms = Mapping[str, PlatformUnit[Any]]
# what `platform=` takes: a name (settings from the environment), a settings value, or None
PlatformOption = PlatformSettings | str | None


def registry_of(*units: PlatformUnit[Any]) -> Platforms:
    """A registry of `units`, by name, in order."""
    return MappingProxyType({unit.name: unit for unit in units})


def _load(module: str) -> PlatformUnit[Any]:
    unit: PlatformUnit[Any] = importlib.import_module(f"{__name__}.{module}").PLATFORM
    return unit


REGISTRY: Platforms = registry_of(*map(_load, _MODULES))


def is_platform(value: object) -> TypeGuard[PlatformSettings]:
    """Whether `value` is a platform's settings (of any platform, registered or not)."""
    return isinstance(getattr(value, "unit", None), PlatformUnit)


def platform_named(name: str, *, registry: Platforms = REGISTRY) -> PlatformUnit[Any]:
    """The unit called `name`; a ConfigurationError naming the choices when there is none."""
    unit = registry.get(name)
    if unit is None:
        raise _unknown(name, registry)
    return unit


def platform_of(option: object, *, registry: Platforms = REGISTRY) -> PlatformSettings | None:
    """The settings `platform=` asks for: a settings value as given, a name's defaults (read
    from the environment when a call is planned); a ConfigurationError naming the choices."""
    if option is None or is_platform(option):
        return option
    if not isinstance(option, str):
        raise _unknown(option, registry)
    settings: PlatformSettings = platform_named(option, registry=registry).settings()
    return settings


def _unknown(option: object, registry: Platforms) -> ConfigurationError:
    return ConfigurationError(
        f"unknown platform {option!r}; choose one of: {', '.join(registry)}, or pass "
        f"{settings_listed(registry)}"
    )


def platform_for_provider(
    provider: str, *, registry: Platforms = REGISTRY
) -> PlatformSettings | None:
    """The platform a model route reached by itself (a Bedrock model id), with no settings."""
    unit = next((unit for unit in registry.values() if unit.provider.name == provider), None)
    return None if unit is None else unit.settings()


def providers(*, registry: Platforms = REGISTRY) -> tuple[Provider, ...]:
    """The platforms' providers, in registry order."""
    return tuple(unit.provider for unit in registry.values())


def listed(words: Iterable[str], conjunction: str = "or") -> str:
    """`a, b or c`: words as a sentence lists them."""
    *head, last = words
    return f"{', '.join(head)} {conjunction} {last}" if head else last


def settings_listed(registry: Platforms = REGISTRY) -> str:
    """`Bedrock(...), Vertex(...) or Azure(...)`: the settings a caller may pass."""
    return listed(f"{unit.settings.__name__}(...)" for unit in registry.values())


__all__ = [
    "REGISTRY",
    "AmbientCredentials",
    "PlatformOption",
    "PlatformSettings",
    "PlatformUnit",
    "Platforms",
    "is_platform",
    "listed",
    "platform_for_provider",
    "platform_named",
    "platform_of",
    "providers",
    "registry_of",
]
