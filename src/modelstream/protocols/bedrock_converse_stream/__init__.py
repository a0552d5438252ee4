"""Amazon Bedrock ConverseStream (`POST /model/{modelId}/converse-stream`): a binary AWS event
stream (`framing/eventstream.py`). Reached today with a Bedrock API key as a bearer token and an
explicit `base_url` (`https://bedrock-runtime.<region>.amazonaws.com`); SigV4 signing from the
AWS credential chain (`modelstream.auth`, the `aws` extra) is wired per request next."""

from __future__ import annotations

from ..descriptor import BEARER, Emulation, Protocol, Provider
from .decoder import BedrockConverseStreamDecoder
from .encoder import BedrockConverseStreamEncoder
from .error_body import read_bedrock_error_body

BEDROCK = Provider(
    "bedrock",
    "",  # regional: the base URL names the region, so it is always given
    ("AWS_BEARER_TOKEN_BEDROCK",),
    "BEDROCK_BASE_URL",
    otel_name="aws.bedrock",
)

PROTOCOL = Protocol(
    name="bedrock-converse-stream",
    decoder=BedrockConverseStreamDecoder,
    encoder=BedrockConverseStreamEncoder,
    framing="eventstream",
    auth=BEARER,  # a Bedrock API key
    provider=BEDROCK,
    accept="application/vnd.amazon.eventstream",
    read_error_body=read_bedrock_error_body,
    emulation=Emulation(
        "modelstream.protocols.bedrock_converse_stream.emulator",
        (r"/model/(?P<model>[^/]+)/converse-stream",),
    ),
)
