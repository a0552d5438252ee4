"""What a caller may ask of a served model beyond the SPEC shapes: the upstream request is
encoded here before any stream starts, and refused (400) when

- a config key is not a config key, or its value breaks the key's rule
  (`protocols/common/config_rules.py`): the sentence a Python caller reads, typed as
  `UnsupportedParameterError` like every config refusal of the server, with the value's `path`;
- it carries `config.extra_body` and the operator forbids it for this model
  (`allow_extra_body = false`);
- `extra_body` would replace or remove a field the encoder writes itself (`model`, `stream`,
  `messages`, or a field another config key set): the operator chose the upstream model, and
  `extra_body` may add provider fields, never override the request the server builds;
- `extra_body` carries one of the protocol's `selectors` (Interactions' `agent` and
  `previous_interaction_id`, Responses' `previous_response_id`, Gemini's `cachedContent`, ...)
  that the model's `allow_selectors` does not name: such a field would run another model or
  agent, or read state stored on the operator's account, which no caller chose to share;
- a header the request would carry holds a character HTTP cannot (a CR/LF smuggled in through
  the config would otherwise break the upstream call mid-flight).

The fields the encoder owns are not listed anywhere: they are the ones present in the same
request encoded without `extra_body`, so a new encoder or a new field is covered as it lands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..client.routing import resolve_route
from ..errors import InvalidConfigError, ModelstreamError
from ..protocols import encode_request, protocol_named
from ..protocols.common.config_rules import check_config
from ..types import Config, Message
from ..web.refusals import Refusal
from .config import ModelEntry
from .wire import bad_config

# what an HTTP header value may hold: visible ASCII, and spaces or tabs between
_HEADER_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?|")


def check_upstream_request(entry: ModelEntry, messages: list[Message], config: Config) -> None:
    """Raise a 400 `Refusal` for a request this server will not send upstream (module
    docstring); the library's own errors (bad messages, unsupported config) pass through."""
    refuse_invalid_config(config)
    client_type = resolve_route(entry.model, entry.client_type).client_type
    request = encode_request(client_type, entry.model, messages, config)
    for name, value in request.headers.items():
        if not _HEADER_VALUE.fullmatch(value):
            raise bad_config(
                "extra_body",
                f"the upstream header {name!r} that the config sets would hold a line break, "
                "a control or a non-ASCII character, which an HTTP header cannot carry; "
                "fix the value in config.extra_body",
            )
    extra = config.get("extra_body")
    if not extra:
        return
    if not entry.allow_extra_body:
        raise bad_config(
            "extra_body",
            f"this server does not forward config.extra_body for model {entry.server_model_id!r} "
            "(allow_extra_body = false in its config); send the request without it",
        )
    for name in extra:
        if name in protocol_named(client_type).selectors and name not in entry.allow_selectors:
            raise bad_config(
                f"extra_body.{name}",
                f"config.extra_body.{name} would pick another model or agent, or state stored "
                f"upstream, than the server serves as {entry.server_model_id!r}; leave it out, "
                f'or ask the operator to allow it (allow_selectors = ["{name}"])',
            )
    owned = _encoded_without_extra_body(client_type, entry.model, messages, config)
    replaced = _first_replaced(owned, extra)
    if replaced is not None:
        raise bad_config(
            f"extra_body.{replaced}",
            f"config.extra_body.{replaced} would replace a field the server writes itself "
            f"for {entry.server_model_id!r}; extra_body may only add provider fields (set the "
            "matching config key instead, or ask the operator to serve another model)",
        )


def refuse_invalid_config(config: Config) -> None:
    """A 400 for a config that breaks the config rules, before it is encoded for any upstream."""
    try:
        check_config(config, protocol="modelstream")
    except InvalidConfigError as exc:
        raise Refusal(
            400,
            "UnsupportedParameterError",  # the type HTTP callers already match on
            str(exc),
            outcome="invalid_request",
            fields=exc.fields(),
        ) from None


def _encoded_without_extra_body(
    client_type: str, model: str, messages: list[Message], config: Config
) -> dict[str, Any]:
    """The body the encoder writes on its own for this request. When the request only makes
    sense with its extra_body (a tool_choice naming a server tool defined there), the body of
    an empty config stands in: the fields written whatever the config says."""
    bare: Config = {key: value for key, value in config.items() if key != "extra_body"}  # type: ignore[assignment]
    try:
        return encode_request(client_type, model, messages, bare).json
    except ModelstreamError:
        return encode_request(client_type, model, messages, {}).json


def _first_replaced(body: Mapping[str, Any], extra: Mapping[str, Any]) -> str | None:
    """The dotted path of the first `extra` entry that would replace or remove (None) a value
    of `body`; objects merge key by key, as `merge_extra_body` merges them."""
    for key, value in extra.items():
        if key not in body:
            continue
        current = body[key]
        if isinstance(current, dict) and isinstance(value, dict):
            inner = _first_replaced(current, value)
            if inner is not None:
                return f"{key}.{inner}"
            continue
        return str(key)
    return None


__all__ = ["check_upstream_request"]
