"""Reading the providers' model-list pages (`GET .../models`): the ids on a page, and the query
that asks for the next one. A page that is not the shape expected lists nothing, never raises."""

from __future__ import annotations

from typing import Any

from ..descriptor import ModelListing


def openai_page(page: Any) -> tuple[list[str], dict[str, str] | None]:
    """OpenAI and its compatible APIs (and a modelstream server): `{"data": [{"id"}]}`, whole."""
    return _ids(page, "data", "id"), None


def anthropic_page(page: Any) -> tuple[list[str], dict[str, str] | None]:
    """Anthropic: `{"data": [{"id"}], "has_more", "last_id"}`, paged by `after_id`."""
    ids = _ids(page, "data", "id")
    more = isinstance(page, dict) and page.get("has_more") is True and page.get("last_id")
    return ids, {"after_id": str(page["last_id"]), "limit": "1000"} if more else None


def gemini_page(page: Any) -> tuple[list[str], dict[str, str] | None]:
    """Gemini: `{"models": [{"name": "models/<id>"}], "nextPageToken"}`."""
    ids = [name.removeprefix("models/") for name in _ids(page, "models", "name")]
    token = page.get("nextPageToken") if isinstance(page, dict) else None
    return ids, {"pageToken": token, "pageSize": "1000"} if isinstance(
        token, str
    ) and token else None


def _ids(page: Any, field: str, key: str) -> list[str]:
    entries = page.get(field) if isinstance(page, dict) else None
    if not isinstance(entries, list):
        return []
    return [
        entry[key]
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get(key), str)
    ]


OPENAI_MODELS = ModelListing("/models", openai_page)
ANTHROPIC_MODELS = ModelListing("/v1/models", anthropic_page)
GEMINI_MODELS = ModelListing("/v1beta/models", gemini_page)
MODELSTREAM_MODELS = ModelListing("/v1/models", openai_page)
