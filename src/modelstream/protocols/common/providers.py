"""Providers reached through more than one protocol (OpenAI: chat, responses, embeddings;
Anthropic; Google). A provider one protocol alone routes to lives in that protocol's package
(Bedrock's in `bedrock_converse_stream`); a cloud platform's (Vertex AI, Azure OpenAI) in its
unit under `modelstream.platforms`.
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
