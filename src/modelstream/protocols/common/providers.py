"""Providers reached through more than one protocol (OpenAI: chat, responses, embeddings), and
the cloud platforms that serve other vendors' protocols on their own paths and auth (Vertex AI:
Gemini and Claude; Azure OpenAI: Chat Completions and Responses). Bedrock, reached through its
own protocol only, lives in `bedrock_converse_stream`."""

from __future__ import annotations

from ...auth.keys import BearerSigner, azure_key
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
# Vertex AI: no key variable; an OAuth access token from Application Default Credentials, or
# one passed as `api_key=` (a bearer token). The host is the location's (client routing).
VERTEX = Provider(
    "vertex",
    "https://{location}-aiplatform.googleapis.com",
    (),
    "GOOGLE_VERTEX_BASE_URL",
    otel_name="gcp.vertex_ai",
    auth=BearerSigner,
)
# Azure OpenAI: the resource's own host (`https://{resource}.openai.azure.com`) is the
# endpoint variable's; a resource key goes in `api-key`, an Entra ID token as a signer.
AZURE = Provider(
    "azure",
    "",
    ("AZURE_OPENAI_API_KEY",),
    "AZURE_OPENAI_ENDPOINT",
    otel_name="azure.ai.openai",
    auth=azure_key,
)

# the platforms' providers, which no model-name route names (the client's `platform=` does)
PLATFORM_PROVIDERS = (VERTEX, AZURE)
