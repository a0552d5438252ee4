"""Amazon Bedrock ConverseStream (`POST /model/{modelId}/converse-stream`): a binary AWS event
stream (`framing/eventstream.py`). Bedrock model ids and inference profiles route here; the
region's endpoint is signed with SigV4 from the AWS credential chain (the `aws` extra), or a
Bedrock API key goes as a bearer token (docs/client.md, "Platforms")."""

from __future__ import annotations

from ...auth.keys import bedrock_api_key
from ...framing import EVENT_STREAM
from ..descriptor import Emulation, ModelRoute, Protocol, Provider
from .decoder import BedrockConverseStreamDecoder
from .encoder import BedrockConverseStreamEncoder
from .error_body import read_bedrock_error_body
from .errors import ERROR_WORDS

BEDROCK = Provider(
    "bedrock",
    "https://bedrock-runtime.{region}.amazonaws.com",  # the region is the client's (routing)
    ("AWS_BEARER_TOKEN_BEDROCK",),
    "BEDROCK_BASE_URL",
    otel_name="aws.bedrock",
)

# Bedrock model ids name their vendor first (`anthropic.claude-…`, `amazon.nova-…`); inference
# profiles add a geography (`us.anthropic.…`, `global.…`); ARNs name a profile or model.
MODEL_ID_PREFIXES = (
    "anthropic.",
    "amazon.",
    "meta.",
    "mistral.",
    "cohere.",
    "ai21.",
    "deepseek.",
    "qwen.",
    "writer.",
    "openai.gpt-oss-",
)
PROFILE_PREFIXES = ("us.", "us-gov.", "eu.", "apac.", "jp.", "au.", "global.")
ARN_PREFIXES = ("arn:aws:bedrock:", "arn:aws-us-gov:bedrock:")

PROTOCOL = Protocol(
    name="bedrock-converse-stream",
    decoder=BedrockConverseStreamDecoder,
    encoder=BedrockConverseStreamEncoder,
    framing=EVENT_STREAM,
    error_words=ERROR_WORDS,
    auth=bedrock_api_key,  # an API key is a Bedrock API key; else SigV4 (client routing)
    provider=BEDROCK,
    routes=(ModelRoute(MODEL_ID_PREFIXES + PROFILE_PREFIXES + ARN_PREFIXES, BEDROCK),),
    accept="application/vnd.amazon.eventstream",
    example_model="us.anthropic.claude-haiku-4-5-20251001-v1:0",
    read_error_body=read_bedrock_error_body,
    emulation=Emulation(
        "modelstream.protocols.bedrock_converse_stream.emulator",
        (r"/model/(?P<model>[^/]+)/converse-stream",),
    ),
)
