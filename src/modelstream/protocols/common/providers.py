"""Providers that more than one protocol reaches, or that a protocol's routes share: OpenAI
(chat, responses, embeddings), Anthropic, Google, xAI (chat and responses) and Mistral. A
provider one protocol alone routes to with nothing but its key and base-URL variables lives in
that protocol's package (DeepSeek's and Z.ai's in `openai_chat`, Bedrock's in
`bedrock_converse_stream`); a cloud platform's (Vertex AI, Azure OpenAI) in its unit under
`modelstream.platforms`.
"""

from __future__ import annotations

from ..descriptor import Provider

OPENAI = Provider("openai", "https://api.openai.com/v1", ("OPENAI_API_KEY",), "OPENAI_BASE_URL")
ANTHROPIC = Provider(
    "anthropic", "https://api.anthropic.com", ("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL"
)
GOOGLE = Provider(
    "google",
    "https://generativelanguage.googleapis.com",
    ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "GEMINI_BASE_URL",
    otel_name="gcp.gemini",
)
# xAI answers OpenAI's Chat Completions and Responses at https://api.x.ai/v1 (docs.x.ai, "REST
# API reference": every route is under https://api.x.ai, the key a bearer token)
XAI = Provider("xai", "https://api.x.ai/v1", ("XAI_API_KEY",), "XAI_BASE_URL", otel_name="x_ai")
# Mistral's La Plateforme: Chat Completions at https://api.mistral.ai/v1, the key a bearer token
MISTRAL = Provider(
    "mistral",
    "https://api.mistral.ai/v1",
    ("MISTRAL_API_KEY",),
    "MISTRAL_BASE_URL",
    otel_name="mistral_ai",
)
