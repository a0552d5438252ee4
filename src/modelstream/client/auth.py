"""The authentication header each protocol family expects (the transport's job, never an
encoder's: encoders produce requests without secrets)."""

from __future__ import annotations

from .credentials import Secret


def auth_headers(client_type: str, key: Secret) -> dict[str, str]:
    """OpenAI family and modelstream servers: `Authorization: Bearer`; Anthropic: `x-api-key`;
    Gemini: `x-goog-api-key`."""
    if client_type.startswith("anthropic"):
        return {"x-api-key": key.reveal()}
    if client_type.startswith("gemini"):
        return {"x-goog-api-key": key.reveal()}
    return {"Authorization": f"Bearer {key.reveal()}"}
