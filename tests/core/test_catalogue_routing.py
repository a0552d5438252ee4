"""The catalogue and routing agree: every model the catalogue lists is routable by its name, to
the provider the catalogue names, over every protocol it lists; and every model the README and
docs/*.md use in their code has a price, unless it is a name they make up on purpose."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from modelstream.catalogue import ModelInfo, load_catalogue
from modelstream.client import resolve_route, route_for_model
from modelstream.protocols import CLIENT_TYPES
from modelstream.testing import Emulator
from support import REPO
from support.client import Drive

CATALOGUE = load_catalogue()  # ours alone: a MODELSTREAM_MODELS file of the machine's is not
ENTRIES = sorted(CATALOGUE, key=lambda entry: entry.id)
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
XAI = ("xai", "https://api.x.ai/v1", ("XAI_API_KEY",))
MISTRAL = ("mistral", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",))

# Names the docs use in code that deliberately have no catalogue price, each with its reason.
UNPRICED = {
    "claude": "a modelstream server's own id for a model it serves (server_model_id)",
    "house-model": "a modelstream server's own id for a model it serves (docs/traces.md)",
    "my-gpt-4o": "an Azure OpenAI deployment name, which the resource owner chooses",
    "llama-3.3-70b": "the example of a model the routing table does not know",
    "llama3.2": "a local Ollama model, priced by the examples' own catalogue file",
    "toy-model": "the model of the toy platform docs/adding-a-platform.md builds",
    "amazon.nova-micro-v1:0": "Bedrock prices it by region; the catalogue has one price a model",
    "gemini-2.5-flash-image": "images and text out are priced apart; an entry has one output rate",
    "gemini-2.5-flash-preview-tts": "a preview whose list price could not be checked",
}

_FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_INLINE = re.compile(r"`([^`\n]+)`")
_ID = r"[A-Za-z][\w.:@-]*"
_QUOTED = re.compile(rf"""(?<![\w\\])["']({_ID})["']""")
# where a model goes: Client("m"), model="m", model = "m" (TOML), model: "m", "model": "m"
_MODEL_PLACE = re.compile(
    rf"""(?:\b(?:Async)?Client\(\s*|\bmodel\s*[=:]\s*|["']model["']\s*:\s*)["']({_ID})["']"""
)
_COMMAND_LINE = re.compile(rf"\bmodelstream\s+\w+\b[^\n`]*?\s(?:-m|--model)[ =]({_ID})")


def _code(text: str) -> Iterator[str]:
    """The fenced blocks of a Markdown page, then its inline code spans."""
    yield from _FENCED.findall(text)
    yield from _INLINE.findall(_FENCED.sub("", text))


def _model_names(code: str) -> Iterator[str]:
    """The model ids a piece of code names: in a model's place, on a command line, or quoted
    where the string routes or the catalogue knows it (a list of models to loop over)."""
    yield from _MODEL_PLACE.findall(code)
    yield from _COMMAND_LINE.findall(code)
    for name in _QUOTED.findall(code):
        if name not in CLIENT_TYPES and (route_for_model(name) or CATALOGUE.lookup(name)):
            yield name


def _docs_models() -> dict[str, list[str]]:
    """Every model id the README and docs/*.md use in code, with the pages that use it."""
    found: dict[str, list[str]] = {}
    for page in DOCS:
        for code in _code(page.read_text("utf-8")):
            for name in _model_names(code):
                if not name.isupper():  # a placeholder: -m MODEL
                    pages = found.setdefault(name, [])
                    if page.name not in pages:
                        pages.append(page.name)
    return found


def _priced(name: str) -> bool:
    entry = CATALOGUE.lookup(name)
    return entry is not None and entry.price is not None


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda entry: entry.id)
def test_every_catalogue_model_routes_by_name_to_its_provider(entry: ModelInfo) -> None:
    for name in (entry.id, *entry.aliases):
        route = route_for_model(name)
        assert route is not None, f"{name}: no routing prefix matches"
        assert route.provider == entry.provider, name
        assert route.client_type in entry.protocols, name
    for bedrock_id in entry.bedrock_ids:  # the model's id on Bedrock goes to Bedrock
        route = route_for_model(bedrock_id)
        assert route is not None and route.provider == "bedrock", bedrock_id


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda entry: entry.id)
def test_every_protocol_a_catalogue_model_lists_keeps_its_provider(entry: ModelInfo) -> None:
    for protocol in entry.protocols:
        route = resolve_route(entry.id, protocol)
        assert (route.client_type, route.provider) == (protocol, entry.provider)


@pytest.mark.parametrize(
    ("model", "endpoint"),
    [
        ("grok-4.3", XAI),
        ("grok-code-fast-1", XAI),
        ("codestral-latest", MISTRAL),
        ("mistral-medium-latest", MISTRAL),
        ("magistral-medium-latest", MISTRAL),
    ],
)
def test_xai_and_mistral_models_go_to_chat_completions_at_their_own_endpoint(
    model: str, endpoint: tuple[str, str, tuple[str, ...]]
) -> None:
    route = resolve_route(model)

    assert route.client_type == "openai-chat"
    assert (route.provider, route.base_url, route.key_envs) == endpoint


def test_an_explicit_client_type_keeps_the_provider_the_catalogue_says_serves_it() -> None:
    grok = resolve_route("grok-4.3", "openai-responses")
    assert (grok.client_type, grok.provider, grok.base_url) == (
        "openai-responses",
        "xai",
        "https://api.x.ai/v1",
    )
    # the catalogue lists no Responses API for DeepSeek: the client type's own provider answers
    deepseek = resolve_route("deepseek-chat", "openai-responses")
    assert (deepseek.client_type, deepseek.provider) == ("openai-responses", "openai")


@pytest.mark.parametrize(
    ("model", "key_env", "url_env"),
    [
        ("grok-4.3", "XAI_API_KEY", "XAI_BASE_URL"),
        ("codestral-latest", "MISTRAL_API_KEY", "MISTRAL_BASE_URL"),
    ],
)
def test_xai_and_mistral_models_stream_with_their_providers_environment_alone(
    drive: Drive,
    emu: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    key_env: str,
    url_env: str,
) -> None:
    monkeypatch.setenv(key_env, "sk-from-env")
    monkeypatch.setenv(url_env, emu.base_url("openai-chat"))

    outcome = drive.stream(model, base_url=None, api_key=None)

    assert outcome.error is None
    assert emu.requests[0].path == "/v1/chat/completions"
    assert emu.requests[0].headers["authorization"] == "Bearer sk-from-env"
    assert emu.requests[0].json["model"] == model


def test_a_grok_model_streams_over_the_responses_api_with_the_xai_key(
    drive: Drive, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XAI_API_KEY", "sk-xai")
    monkeypatch.setenv("XAI_BASE_URL", emu.base_url("openai-responses"))

    outcome = drive.stream("grok-4.3", client_type="openai-responses", base_url=None, api_key=None)

    assert outcome.error is None
    assert emu.requests[0].path == "/v1/responses"
    assert emu.requests[0].headers["authorization"] == "Bearer sk-xai"


def test_every_model_the_docs_use_has_a_price() -> None:
    used = _docs_models()
    unpriced = {
        name: pages for name, pages in used.items() if name not in UNPRICED and not _priced(name)
    }

    assert {"gpt-5-mini", "claude-sonnet-4-5", "deepseek-chat", "gpt-4o"} <= set(used)
    assert not unpriced, (
        "models the docs use with no price in src/modelstream/catalogue/models.toml "
        f"(add one, or list the name in UNPRICED with its reason): {unpriced}"
    )


def test_every_name_left_unpriced_is_still_used_and_still_unpriced() -> None:
    used = _docs_models()

    for name in UNPRICED:
        assert name in used, f"{name} is no longer in the docs: drop it from UNPRICED"
        assert not _priced(name), f"{name} has a price now: drop it from UNPRICED"
