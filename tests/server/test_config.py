"""The server config file: a model table, bearer keys and limits, with every secret read from
the environment and every mistake reported with where it is, never with a secret's value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modelstream.server import ServerConfigError, load_settings, settings_from_mapping

ENV = {"UPSTREAM_KEY": "sk-upstream-secret-1", "CLIENT_KEY": "client-secret-2"}

TOML = """
keys = ["$CLIENT_KEY"]
keepalive_seconds = 10
resume_grace_seconds = 20
retain_seconds = 120

[limits]
max_body_bytes = 65536
max_concurrent_streams = 8

[[models]]
server_model_id = "claude"
model = "claude-sonnet-4-5"
api_key = "${UPSTREAM_KEY}"

[[models]]
server_model_id = "local/llama"
model = "llama3.2"
client_type = "openai-chat"
base_url = "http://127.0.0.1:11434/v1"
api_key = "$UPSTREAM_KEY"
"""


def model_table(**fields: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "server_model_id": "m",
        "model": "claude-sonnet-4-5",
        "api_key": "$UPSTREAM_KEY",
    }
    entry.update(fields)
    return {"models": [entry]}


def refusal(data: dict[str, object], env: dict[str, str] = ENV) -> str:
    with pytest.raises(ServerConfigError) as caught:
        settings_from_mapping(data, env)
    return str(caught.value)


def test_a_toml_file_gives_models_keys_limits_and_timings(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text(TOML)

    settings = load_settings(path, ENV)

    claude, llama = settings.models
    assert (claude.server_model_id, claude.model, claude.provider) == (
        "claude",
        "claude-sonnet-4-5",
        "anthropic",
    )
    assert claude.api_key is not None and claude.api_key.reveal() == "sk-upstream-secret-1"
    assert claude.api_key_env == "UPSTREAM_KEY"
    assert (llama.client_type, llama.base_url, llama.provider) == (
        "openai-chat",
        "http://127.0.0.1:11434/v1",
        "openai",
    )
    assert [key.reveal() for key in settings.keys] == ["client-secret-2"]
    assert settings.key_envs == ("CLIENT_KEY",)
    assert not settings.open
    assert settings.limits.max_body_bytes == 65536
    assert settings.limits.max_concurrent_streams == 8
    assert settings.limits.max_events_per_stream == 100_000  # a default
    assert (settings.keepalive_seconds, settings.resume_grace_seconds) == (10, 20)
    assert settings.retain_seconds == 120
    assert settings.model("local/llama") is llama and settings.model("nope") is None


def test_a_json_file_is_read_by_its_extension(tmp_path: Path) -> None:
    path = tmp_path / "server.json"
    path.write_text(json.dumps(model_table()))

    settings = load_settings(path, ENV)

    assert [m.server_model_id for m in settings.models] == ["m"]
    assert settings.open


def test_secrets_stay_out_of_the_settings_repr(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text(TOML)

    text = repr(load_settings(path, ENV))

    assert "sk-upstream-secret-1" not in text and "client-secret-2" not in text


def test_a_literal_api_key_is_refused_without_echoing_it() -> None:
    message = refusal(model_table(api_key="sk-literal-do-not-echo"))

    assert "models[0].api_key" in message and "environment variable" in message
    assert "sk-literal-do-not-echo" not in message


def test_a_literal_bearer_key_is_refused_without_echoing_it() -> None:
    message = refusal({**model_table(), "keys": ["hunter2-literal"]})

    assert "keys[0]" in message and "hunter2-literal" not in message


def test_a_variable_that_is_not_set_is_named() -> None:
    message = refusal(model_table(api_key="${NOT_SET_ANYWHERE}"))

    assert "NOT_SET_ANYWHERE is not set" in message


def test_an_unknown_setting_is_refused_by_name_only() -> None:
    message = refusal(model_table(apikey="sk-typo-secret"))

    assert "'apikey'" in message and "sk-typo-secret" not in message


def test_a_model_no_route_knows_asks_for_a_client_type() -> None:
    message = refusal(model_table(model="llama-3.3-70b"))

    assert "models[0]" in message and "client_type" in message


def test_entries_sharing_a_server_model_id_are_deployments_of_it() -> None:
    data = model_table()
    first, second = dict(data["models"][0]), dict(data["models"][0])  # type: ignore[index]
    second["deployment"] = "m-eu"
    data["models"] = [first, second]

    settings = settings_from_mapping(data, ENV)

    (served,) = settings.served.values()
    assert served.server_model_id == "m"
    assert [entry.deployment for entry in served.deployments] == ["m#1", "m-eu"]


def test_a_duplicate_deployment_name_is_refused() -> None:
    data = model_table()
    entry = {**data["models"][0], "deployment": "east"}  # type: ignore[dict-item]
    data["models"] = [entry, dict(entry)]

    assert "'east' appears twice" in refusal(data)


def test_limits_and_timings_must_be_positive_numbers() -> None:
    assert "max_body_bytes must be positive" in refusal(
        {**model_table(), "limits": {"max_body_bytes": 0}}
    )
    assert "must be an integer" in refusal(
        {**model_table(), "limits": {"max_concurrent_streams": 1.5}}
    )
    assert "keepalive_seconds must be a number" in refusal(
        {**model_table(), "keepalive_seconds": "15"}
    )
    assert "resume_grace_seconds must be at least 0.1" in refusal(
        {**model_table(), "resume_grace_seconds": 0}
    )


def test_a_file_that_is_not_toml_is_reported_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("models = [\n")

    with pytest.raises(ServerConfigError, match=r"broken\.toml: not valid TOML"):
        load_settings(path, ENV)


def test_a_missing_file_is_reported_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(ServerConfigError, match="no such config file"):
        load_settings(tmp_path / "absent.toml", ENV)


def test_a_platform_is_named_or_given_as_a_table_with_its_settings() -> None:
    from modelstream.client import Azure, Vertex

    named = settings_from_mapping(
        model_table(
            model="my-gpt",
            client_type="openai-chat",
            platform="azure",
            base_url="https://res.openai.azure.com",
        ),
        ENV,
    )
    table = settings_from_mapping(
        model_table(
            model="gemini-2.5-pro",
            platform={"name": "vertex", "project": "my-project", "location": "us-east5"},
        ),
        ENV,
    )

    assert named.models[0].platform == Azure()
    assert named.models[0].provider == "azure"
    assert table.models[0].platform == Vertex(project="my-project", location="us-east5")
    assert table.models[0].provider == "vertex"


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        ("gcp", "unknown platform 'gcp'; choose one of: bedrock, vertex, azure"),
        ({"project": "p"}, 'platform must be "bedrock", "vertex" or "azure", or a table'),
        ({"name": "vertex", "zone": "z"}, "platform 'vertex' has unknown setting(s) 'zone'"),
        ({"name": "bedrock", "region": 1}, "platform 'bedrock': region must be strings"),
    ],
)
def test_a_wrong_platform_is_refused_with_where_and_what(platform: object, expected: str) -> None:
    message = refusal(model_table(platform=platform))

    assert message.startswith("models[0] ('m'): ")
    assert expected in message


def test_virtual_keys_are_off_until_their_table_is_there() -> None:
    assert settings_from_mapping(model_table(), ENV).virtual_keys is None

    settings = settings_from_mapping(
        {**model_table(), "virtual_keys": {"unknown_cost": "0.002", "hold_seconds": 120}}, ENV
    )

    assert settings.virtual_keys is not None
    assert str(settings.virtual_keys.unknown_cost_rate) == "0.002"
    assert settings.virtual_keys.hold_seconds == 120
    assert not settings.open  # no static keys, but a caller needs a virtual one


def test_virtual_keys_settings_are_checked() -> None:
    def refused(table: object) -> str:
        return refusal({**model_table(), "virtual_keys": table})

    assert "unknown_cost must be" in refused({"unknown_cost": 0.002})
    assert "unknown_cost must be" in refused({"unknown_cost": "-1"})
    assert "hold_seconds must be at least 60" in refused({"hold_seconds": 5})
    assert "'admin_key'" in refused({"admin_key": ["$CLIENT_KEY"]})
    assert "must name an environment variable" in refused({"admin_keys": ["literal-key"]})


def test_cors_origins_are_page_origins_without_a_path() -> None:
    settings = settings_from_mapping(
        {**model_table(), "cors_origins": ["https://chat.example.com/", "http://localhost:5173"]},
        ENV,
    )
    assert settings.cors_origins == ("https://chat.example.com", "http://localhost:5173")
    for wrong in (
        ["chat.example.com"],
        ["https://chat.example.com/app"],
        "https://a.example",
        ["*"],
    ):
        message = refusal({**model_table(), "cors_origins": wrong})
        assert "'cors_origins' must be a list of page origins" in message
