"""SPEC messages for the request-encoder tests: done items and the two roles, written once."""

from __future__ import annotations

from typing import Any


def text(value: str, fidelity: dict[str, Any] | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "text.done", "text": value}
    if fidelity is not None:
        item["fidelity"] = fidelity
    return item


def thinking(value: str, fidelity: dict[str, Any] | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "thinking.done", "thinking": value}
    if fidelity is not None:
        item["fidelity"] = fidelity
    return item


def call(call_id: str, name: str, arguments: dict[str, Any], **fidelity: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "tool_call.done",
        "tool_call_id": call_id,
        "name": name,
        "arguments": arguments,
    }
    if fidelity:
        item["fidelity"] = fidelity
    return item


def result(call_id: str, value: str, images: list[str] | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "tool_result.done", "tool_call_id": call_id, "text": value}
    if images is not None:
        item["images"] = images
    return item


def image(url: str) -> dict[str, Any]:
    return {"type": "image_url.done", "image_url": url}


def user(*items: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content_items": list(items)}


def assistant(*items: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content_items": list(items)}
