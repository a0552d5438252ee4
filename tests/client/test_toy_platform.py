"""A platform of our own, added the way docs/adding-a-platform.md says, once: "toycloud" serves
Chat Completions under a tenant's path and takes its key in a header of its own. It is defined
and registered here only: the registry this test builds holds it, the package's does not."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

import pytest

from modelstream import ConfigurationError, FinalResponse
from modelstream.auth import HeaderKeySigner
from modelstream.auth.signing import RequestSigner
from modelstream.client import AsyncClient, Client, resolve_route
from modelstream.platforms import (
    REGISTRY,
    platform_for_provider,
    platform_named,
    platform_of,
    registry_of,
)
from modelstream.platforms.descriptor import PlatformUnit
from modelstream.protocols.common.encoding import ProviderRequest
from modelstream.protocols.descriptor import Provider
from modelstream.testing import Emulator, Reply, Turn

KEY = "toycloud-SECRET-key-0123456789"
HELLO = [{"role": "user", "content_items": [{"type": "text.done", "text": "hello"}]}]

# --- the platform module, as docs/adding-a-platform.md writes one --------------------------------

TOYCLOUD_PROVIDER = Provider(
    "toycloud",
    "https://api.toycloud.example",
    ("TOYCLOUD_API_KEY",),
    "TOYCLOUD_BASE_URL",
    auth=partial(HeaderKeySigner, "x-toycloud-key"),
)


@dataclass(frozen=True)
class ToyCloud:
    """Toy Cloud. `tenant` defaults to `TOYCLOUD_TENANT`."""

    tenant: str | None = None
    name: ClassVar[str] = "toycloud"

    @property
    def unit(self) -> PlatformUnit[ToyCloud]:
        return TOYCLOUD


def located(
    toy: ToyCloud, model: str, env: Mapping[str, str], signer: RequestSigner | None
) -> ToyCloud:
    tenant = toy.tenant or env.get("TOYCLOUD_TENANT")
    if not tenant:
        raise ConfigurationError("toycloud needs a tenant: set TOYCLOUD_TENANT")
    return ToyCloud(tenant)


def chat(request: ProviderRequest, toy: ToyCloud, model: str) -> ProviderRequest:
    return dataclasses.replace(request, path=f"/toycloud/{toy.tenant}/chat/completions")


TOYCLOUD = PlatformUnit(
    name="toycloud",
    title="Toy Cloud",
    provider=TOYCLOUD_PROVIDER,
    serves=("openai-chat",),
    settings=ToyCloud,
    base_url=lambda toy: TOYCLOUD_PROVIDER.base_url,
    locate=located,
    requests={"openai-chat": chat},
)

# --- its registry line, in a registry of the test's own ------------------------------------------

PLATFORMS = registry_of(*REGISTRY.values(), TOYCLOUD)


@pytest.fixture(autouse=True)
def toycloud_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOYCLOUD_API_KEY", "TOYCLOUD_BASE_URL", "TOYCLOUD_TENANT", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def run(kind: str, model: str, **options: Any) -> Any:
    """The result of one streamed turn through `Client` (kind "sync") or `AsyncClient`."""
    if kind == "sync":
        with Client(model, **options) as client:
            stream = client.stream(HELLO)
            for _ in stream:
                pass
            return stream.result

    async def go() -> Any:
        async with AsyncClient(model, **options) as client:
            stream = client.stream(HELLO)
            async for _ in stream:
                pass
            return stream.result

    return asyncio.run(go())


def test_the_tests_registry_holds_toycloud_and_the_packages_does_not() -> None:
    assert list(PLATFORMS) == [*REGISTRY, "toycloud"]
    assert "toycloud" not in REGISTRY
    assert platform_of("toycloud", registry=PLATFORMS) == ToyCloud()
    assert platform_named("toycloud", registry=PLATFORMS) is TOYCLOUD
    assert platform_for_provider("toycloud", registry=PLATFORMS) == ToyCloud()
    assert platform_for_provider("toycloud") is None
    with pytest.raises(ConfigurationError, match=r"unknown platform 'toycloud'; choose one of"):
        platform_of("toycloud")


def test_an_unknown_name_lists_the_registrys_platforms_and_their_settings() -> None:
    with pytest.raises(ConfigurationError) as caught:
        platform_of("toycluod", registry=PLATFORMS)
    assert str(caught.value) == (
        "unknown platform 'toycluod'; choose one of: bedrock, vertex, azure, toycloud, or pass "
        "Bedrock(...), Vertex(...), Azure(...) or ToyCloud(...)"
    )


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_call_goes_to_the_tenants_path_with_the_key_in_toyclouds_header(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Emulator() as emu:
        monkeypatch.setenv("TOYCLOUD_BASE_URL", emu.url)  # the key variable's own URL
        monkeypatch.setenv("TOYCLOUD_API_KEY", KEY)
        monkeypatch.setenv("TOYCLOUD_TENANT", "acme")
        path = "/toycloud/acme/chat/completions"
        emu.queue(Reply.turn(Turn.text("Hello from Toy Cloud")), path=path)
        result = run(kind, "toy-model", platform=platform_of("toycloud", registry=PLATFORMS))

        assert isinstance(result, FinalResponse)
        assert result.message["content_items"][0]["text"] == "Hello from Toy Cloud"
        assert (result.metadata.protocol, result.metadata.provider) == (
            "openai-chat",
            "toycloud",
        )
        request = emu.requests[0]
        assert request.path == path
        assert request.headers["x-toycloud-key"] == KEY
        assert "authorization" not in request.headers
        assert request.json["model"] == "toy-model"
        assert request.json["stream"] is True


def test_the_environments_key_is_not_sent_to_another_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOYCLOUD_API_KEY", KEY)
    with pytest.raises(ConfigurationError, match="never sent elsewhere"):
        Client("toy-model", platform=ToyCloud("acme"), base_url="http://127.0.0.1:9")


def test_toycloud_says_what_it_needs_and_what_it_serves() -> None:
    with pytest.raises(ConfigurationError, match="toycloud needs a tenant: set TOYCLOUD_TENANT"):
        Client("toy-model", platform=ToyCloud(), api_key=KEY)
    with pytest.raises(ConfigurationError, match=r"no API key for toycloud \(openai-chat\)"):
        Client("toy-model", platform=ToyCloud("acme"))
    with pytest.raises(
        ConfigurationError,
        match="toycloud does not serve client type 'anthropic-messages'; it serves openai-chat",
    ):
        resolve_route("claude-sonnet-4-5", "anthropic-messages", ToyCloud("acme"))
    # a model whose own protocol the platform does not serve gets its default
    assert resolve_route("claude-sonnet-4-5", None, ToyCloud("acme")).client_type == "openai-chat"
