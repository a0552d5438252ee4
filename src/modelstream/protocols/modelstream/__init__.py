"""A modelstream server's own stream (`POST /v1/stream`, docs/server.md): the events it relays,
resumable by SSE id. It has no public endpoint: the base URL is always given."""

from __future__ import annotations

from ...auth.keys import BearerSigner
from ...framing import SSE
from ..common.model_lists import MODELSTREAM_MODELS
from ..descriptor import Protocol, Provider
from .decoder import ModelstreamDecoder
from .encoder import ModelstreamEncoder

PROTOCOL = Protocol(
    name="modelstream",
    decoder=ModelstreamDecoder,
    encoder=ModelstreamEncoder,
    framing=SSE,
    auth=BearerSigner,  # the server's bearer key; an open server ignores it
    provider=Provider("modelstream", "", ("MODELSTREAM_API_KEY",), "MODELSTREAM_BASE_URL"),
    relayed=True,
    models=MODELSTREAM_MODELS,
)
