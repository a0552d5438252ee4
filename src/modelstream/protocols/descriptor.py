"""What one wire protocol is, as one value.

The registry (`modelstream.protocols`) holds one `Protocol` per wire protocol; the client, server,
CLI, emulator, traces and bench read these descriptors instead of keeping tables of their own, so
adding a protocol is writing its package and one registry line (docs/adding-a-protocol.md).

Words (docs/providers.md): a *protocol* is a wire protocol, named by its registry key
("openai-chat"); `client_type=` is the caller's choice of protocol; a *provider* is who runs an
endpoint that speaks it (openai, deepseek, google, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..auth.secret import Secret
from ..auth.signing import RequestSigner
from ..error_bodies import ErrorBodyReader, ErrorWords, read_error_body
from ..framing import Framing
from .common.decoding import StreamDecoderAdapter
from .common.encoding import RequestEncoder
from .common.gateway import GatewayWire

# How an API key is sent: a signer made from it (`modelstream.auth`: `BearerSigner`,
# `anthropic_key`, `gemini_key`, `azure_key`, ...). The transport signs every attempt with it.
SignerFactory = Callable[[Secret], RequestSigner]


@dataclass(frozen=True)
class Provider:
    """Who runs an endpoint: its public base URL and where its key and URL are configured."""

    name: str  # e.g. "openai", "deepseek", "google"
    base_url: str  # the public endpoint ("" when there is none: a modelstream server)
    key_envs: tuple[str, ...]  # API-key variables, first one set wins
    base_url_env: str  # a base URL the provider's env key may also be sent to
    otel_name: str | None = None  # the OpenTelemetry GenAI registry's name, when not `name`
    # how this provider takes an API key when it differs from the protocol's (Azure's `api-key`
    # header, a Vertex access token as bearer); None: the protocol's `auth`
    auth: SignerFactory | None = None


@dataclass(frozen=True)
class ModelRoute:
    """Models whose names start with one of `prefixes` (case-insensitively) go to `provider`."""

    prefixes: tuple[str, ...]
    provider: Provider


# One page of a models endpoint's JSON -> (the model ids on it, the query of the next page or
# None when it is the last)
ModelPageReader = Callable[[Any], tuple[list[str], dict[str, str] | None]]


@dataclass(frozen=True)
class ModelListing:
    """The protocol's endpoint that lists the models a key may use (`client.list_models()`)."""

    path: str  # GET, after the base URL (e.g. "/models", "/v1/models", "/v1beta/models")
    read_page: ModelPageReader


@dataclass(frozen=True)
class Emulation:
    """How `modelstream.testing.Emulator` serves the protocol."""

    # the module defining `EMULATOR` (its writer, error bodies and request readers); imported on
    # first use, so that importing modelstream never loads test code
    module: str
    # regular expressions matched against the whole request path; a `model` group names the model
    paths: tuple[str, ...]
    base_path: str = ""  # what a client's base URL adds before `paths` ("/v1": OpenAI family)


@dataclass(frozen=True, repr=False)
class Protocol:
    """One wire protocol: how to encode its requests, decode its responses, reach and sign it."""

    name: str  # the registry key, e.g. "openai-chat"; what `client_type=` names
    decoder: type[StreamDecoderAdapter]  # response body frames -> the grammar's events
    encoder: Callable[[], RequestEncoder]  # messages + config -> one HTTP request
    framing: Framing  # how a body is cut into frames: `framing.SSE`, `JSON_BODY`, `EVENT_STREAM`
    auth: SignerFactory  # the signer an API key becomes (e.g. `BearerSigner`, `anthropic_key`)
    provider: Provider  # where an explicit `client_type=` goes when the model's route differs
    routes: tuple[ModelRoute, ...] = ()  # model-name prefixes that choose this protocol
    accept: str = "text/event-stream"  # the request's Accept header
    read_error_body: ErrorBodyReader = read_error_body  # a refused request's body (and headers)
    # how its providers name error causes (types, codes, messages); the registry merges them
    error_words: ErrorWords = field(default_factory=ErrorWords)
    otel_operation: str = "chat"  # OpenTelemetry `gen_ai.operation.name`
    emulation: Emulation | None = None  # how the emulator serves it (None: not emulated)
    example_model: str = ""  # a model whose name routes here: for the demo, bench and tests
    relayed: bool = False  # a modelstream server's relayed events, not a provider's wire
    embedding: bool = False  # answers with vectors, not a stream of items
    models: ModelListing | None = None  # the models endpoint, where the protocol has one
    # the inbound half: the server answers in this wire (SPEC §8, docs/gateway.md); None: not
    gateway: GatewayWire | None = None
    # request-body fields that pick, on the provider's side, another model or agent or stored
    # state (a previous turn, a cached context, a container) than the request itself carries:
    # a server forwards them from a caller's extra_body only where its model allows them
    selectors: tuple[str, ...] = ()

    def __repr__(self) -> str:  # its name says which; the fields are functions and tables
        return f"Protocol({self.name!r})"


__all__ = ["Emulation", "Framing", "ModelRoute", "Protocol", "Provider", "SignerFactory"]
