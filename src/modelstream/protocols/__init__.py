"""The registry: every wire protocol modelstream speaks, by name, as one `Protocol` descriptor.

Client, server, CLI, emulator, traces and bench read this registry; no other table names a
protocol. Adding a protocol is writing its package (docs/adding-a-protocol.md) and adding its
line below.
"""

from __future__ import annotations

import importlib
import operator
from collections.abc import Mapping
from functools import cache, reduce
from types import MappingProxyType

from ..error_bodies import ErrorWords
from ..errors import ConfigurationError
from ..types import Config, Message
from .common.decoding import StreamDecoderAdapter
from .common.encoding import ProviderRequest, RequestEncoder
from .common.gateway import GatewayWire
from .descriptor import Protocol, Provider

# one line per protocol: the package under modelstream/protocols/ that defines its PROTOCOL
_PACKAGES = (
    "openai_chat",
    "openai_responses",
    "anthropic_messages",
    "gemini_generate_content",
    "gemini_interactions",
    "bedrock_converse_stream",
    "openai_embedding",
    "gemini_embedding",
    "modelstream",
)


def _load(package: str) -> Protocol:
    protocol: Protocol = importlib.import_module(f"{__name__}.{package}").PROTOCOL
    return protocol


REGISTRY: Mapping[str, Protocol] = MappingProxyType({p.name: p for p in map(_load, _PACKAGES)})

# The front-end wires (docs/frontends.md): the server answers in them, and no provider speaks
# them, so they are gateway wires without an upstream half, by name. Only the server reads them,
# so they load on first use: `replay` and `check` start without them.
_FRONTEND_PACKAGES = ("ai_sdk_ui", "ag_ui")


@cache
def frontends() -> Mapping[str, GatewayWire]:
    """Every front-end wire, by name."""
    wires = {}
    for package in _FRONTEND_PACKAGES:
        module = importlib.import_module(f"{__name__}.{package}")
        wires[module.NAME] = module.GATEWAY
    return MappingProxyType(wires)


# Every protocol a client can speak: the values `client_type=` accepts.
CLIENT_TYPES: tuple[str, ...] = tuple(REGISTRY)
# The providers' streaming protocols: what `modelstream replay` and the corpus speak.
PROTOCOLS: tuple[str, ...] = tuple(
    name for name, p in REGISTRY.items() if not p.relayed and not p.embedding
)
EMBEDDING_PROTOCOLS: tuple[str, ...] = tuple(name for name, p in REGISTRY.items() if p.embedding)
# How every provider names its error causes (each package's `error_words`), merged: the words
# the core's error readers (`error_bodies`) are given, as a provider may relay another's error.
ERROR_WORDS: ErrorWords = reduce(
    operator.or_, (p.error_words for p in REGISTRY.values()), ErrorWords()
)


def error_words_of(protocol: Protocol) -> ErrorWords:
    """The words a turn of `protocol` is read with: every registered protocol's, and its own
    too when it is a descriptor the registry does not hold."""
    if REGISTRY.get(protocol.name) is protocol:
        return ERROR_WORDS
    return ERROR_WORDS | protocol.error_words


def protocol_named(name: str | Protocol, *, what: str = "protocol") -> Protocol:
    """The descriptor of `name`; a ConfigurationError listing the choices when there is none.
    `what` is the word the caller's user knows it by ("client type" for `client_type=`). A
    descriptor is its own answer: a protocol a program (or a test) defines without registering
    it is passed as its `Protocol` value (docs/adding-a-protocol.md)."""
    if isinstance(name, Protocol):
        return name
    try:
        return REGISTRY[name]
    except KeyError:
        choices = CLIENT_TYPES if what == "client type" else PROTOCOLS
        raise ConfigurationError(
            f"unknown {what} {name!r}; choose one of: {', '.join(choices)}"
        ) from None


def decoder_class(protocol: str | Protocol) -> type[StreamDecoderAdapter]:
    return protocol_named(protocol).decoder


def encoder_for(client_type: str | Protocol) -> RequestEncoder:
    return protocol_named(client_type, what="client type").encoder()


def encode_request(
    client_type: str | Protocol, model: str, messages: list[Message], config: Config | None = None
) -> ProviderRequest:
    """The HTTP request (without credentials or base URL) for one turn."""
    return encoder_for(client_type).encode(model, messages, config or {})


def providers() -> tuple[Provider, ...]:
    """Every provider the registry reaches, each once, in registry order."""
    seen: dict[str, Provider] = {}
    for protocol in REGISTRY.values():
        for provider in (protocol.provider, *(route.provider for route in protocol.routes)):
            seen.setdefault(provider.name, provider)
    return tuple(seen.values())


__all__ = [
    "CLIENT_TYPES",
    "EMBEDDING_PROTOCOLS",
    "ERROR_WORDS",
    "PROTOCOLS",
    "REGISTRY",
    "Protocol",
    "ProviderRequest",
    "RequestEncoder",
    "StreamDecoderAdapter",
    "decoder_class",
    "encode_request",
    "encoder_for",
    "error_words_of",
    "frontends",
    "protocol_named",
    "providers",
]
