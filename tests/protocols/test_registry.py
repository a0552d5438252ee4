"""The protocol registry is the one table: every package registers, and its descriptor agrees with
the decoder, the routes and the emulator it names."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import modelstream.protocols as protocols
from modelstream.client import resolve_route
from modelstream.errors import ConfigurationError
from modelstream.protocols import PROTOCOLS, REGISTRY, frontends, protocol_named
from modelstream.testing.routes import emulator_for

NAMES = list(REGISTRY)


def test_every_protocol_package_is_registered():
    folder = Path(protocols.__file__).parent
    packages = {p.name for p in folder.iterdir() if (p / "__init__.py").exists()} - {"common"}
    registered = {name.replace("-", "_") for name in [*REGISTRY, *frontends()]}
    assert packages == registered


@pytest.mark.parametrize("name", NAMES)
def test_a_descriptor_is_keyed_by_its_name_and_agrees_with_its_decoder(name: str):
    protocol = REGISTRY[name]
    assert protocol.name == name
    assert protocol.decoder.protocol == name
    assert protocol.encoder().encode is not None


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].routes])
def test_the_example_model_routes_to_its_protocol_by_name(name: str):
    assert resolve_route(REGISTRY[name].example_model).client_type == name


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].emulation])
def test_the_emulator_module_of_a_protocol_defines_its_emulator(name: str):
    emulation = REGISTRY[name].emulation
    assert emulation is not None
    assert importlib.import_module(emulation.module).EMULATOR is emulator_for(name)


def test_replay_protocols_are_the_providers_streaming_protocols():
    assert "modelstream" not in PROTOCOLS  # relayed events, not a provider's wire
    assert not any(REGISTRY[name].embedding for name in PROTOCOLS)


def test_an_unknown_client_type_lists_the_registry():
    with pytest.raises(ConfigurationError, match="unknown client type 'openai-chats'") as caught:
        protocol_named("openai-chats", what="client type")
    assert all(name in str(caught.value) for name in REGISTRY)
