"""Providers reached through more than one protocol (OpenAI: chat, responses, embeddings)."""

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
