"""Messages from plain values: `user("…", images=[…])`, `assistant("…")`, `tool_result(…)`.

SPEC messages (`{"role": "user", "content_items": [...]}`) are what every call takes and keeps,
but nobody should have to type them for "Hello". These helpers build them, and `as_messages`
turns what `stream()`/`complete()` accept (a string, one message, or a list of messages, SPEC or
OpenAI-style: `openai_messages`) into the list the encoders read. The helpers return plain SPEC
dicts: nothing here survives into a request but the JSON.

There is no `system()` helper because the SPEC has no system role: the system prompt is
`config["system_prompt"]`.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import orjson

from .errors import InvalidMessageError
from .media import parse_data_url, read_media_file, sniff_media_type
from .openai_messages import MESSAGE_SHAPES, from_openai_style
from .types import DoneItem, InlineDataDone, Message, ToolResultDone

# An image: its bytes, a file path, an http(s) URL or a `data:` URL.
Image = bytes | str | os.PathLike[str]
# What `stream()` and `complete()` take: the user's turn as text, one message, or a history.
Prompt = str | Mapping[str, Any] | Sequence[Mapping[str, Any]]


def user(*content: str | DoneItem, images: Iterable[Image] = ()) -> Message:
    """A user message: its text (and done items, e.g. tool results) in order, then the images.

    An image is bytes, a file path (read now), an http(s) URL (sent as a URL, never fetched) or
    a `data:` URL; bytes, files and data URLs become `inline_data` items.
    """
    items: list[DoneItem] = [_content_item(part, index) for index, part in enumerate(content)]
    if isinstance(images, str | bytes | os.PathLike):
        raise TypeError("images must be a list of images, e.g. images=['photo.png']")
    items += [_image_item(image) for image in images]
    if not items:
        raise ValueError("a user message needs text, an image or a tool result: user('Hello')")
    return {"role": "user", "content_items": items}


def assistant(text: str) -> Message:
    """An assistant message holding `text`, e.g. to write a few-shot example into a history."""
    if not isinstance(text, str):
        raise TypeError(f"assistant() takes the reply's text as a str, got {_name(text)}")
    return {"role": "assistant", "content_items": [{"type": "text.done", "text": text}]}


def tool_result(
    call_id: str, content: Any, *, is_error: bool = False, images: Iterable[Image] = ()
) -> ToolResultDone:
    """The result of tool call `call_id`: `content` as text (a str as is, anything else as
    JSON). Send it in the next user turn: `user(tool_result(...), ...)`, or a list of them to
    `Conversation.send`.

    The SPEC has no error flag: `is_error=True` says so in the text ("error: …"), which every
    model reads. Images (bytes, paths or URLs) ride along as URLs, files and bytes as `data:`.
    """
    if not isinstance(call_id, str) or not call_id:
        raise TypeError(
            f"tool_result() needs the tool call's id as a non-empty str (the call's "
            f"`tool_call_id`, or `.id` of an item of `message.tool_calls`), got {call_id!r}"
        )
    text = content if isinstance(content, str) else _json_text(content)
    if is_error:
        text = f"error: {text}"
    item: ToolResultDone = {"type": "tool_result.done", "tool_call_id": call_id, "text": text}
    if isinstance(images, str | bytes | os.PathLike):
        raise TypeError("images must be a list of images, e.g. images=['chart.png']")
    urls = [_image_url(image) for image in images]
    if urls:
        item["images"] = urls
    return item


def as_messages(prompt: Prompt) -> list[Message]:
    """The message list for a call: a str is one user turn, a message a list of one; a list is
    taken as it is, its OpenAI-style messages converted (the encoders check each message and
    say what is wrong with it)."""
    if isinstance(prompt, str):
        return [user(prompt)]
    if isinstance(prompt, list):
        for index, message in enumerate(prompt):
            if type(message) is not dict and not isinstance(message, Mapping):  # dict: fast
                raise _not_a_message(message, index)
        return cast(list[Message], from_openai_style(prompt))
    if isinstance(prompt, Mapping):
        return cast(list[Message], from_openai_style([prompt]))
    if isinstance(prompt, tuple):
        return as_messages(list(prompt))
    raise _not_a_message(prompt)


def _not_a_message(value: Any, index: int | None = None) -> TypeError:
    where = "messages" if index is None else f"message {index}"
    hint = " (wrap text in user('...') or assistant('...'))" if isinstance(value, str) else ""
    return TypeError(
        f"{where} must be a str (the user's turn), a message dict or a list of messages, got "
        f"{_name(value)}{hint}; {MESSAGE_SHAPES}, e.g. complete('Hello') or "
        "complete([{'role': 'user', 'content': 'Hello'}])"
    )


def _content_item(part: Any, index: int) -> DoneItem:
    if isinstance(part, str):
        return {"type": "text.done", "text": part}
    if isinstance(part, Mapping) and str(part.get("type", "")).endswith(".done"):
        return cast(DoneItem, dict(part))
    raise TypeError(
        f"user() part {index} must be text (a str) or a done item such as tool_result(...), "
        f"got {_name(part)}; pass images with images=[...]"
    )


def _image_item(image: Image) -> DoneItem:
    """An `image_url` item for an http(s) URL, else an `inline_data` item with the bytes."""
    if isinstance(image, str) and image[:8].lower().startswith(("http://", "https://")):
        return {"type": "image_url.done", "image_url": image}
    data, mime_type = _image_bytes(image)
    item: InlineDataDone = {"type": "inline_data.done", "data": data, "mime_type": mime_type}
    return item


def _image_url(image: Image) -> str:
    """The URL form a tool result's images take: http(s) as is, the rest as a `data:` URL."""
    if isinstance(image, str) and image[:8].lower().startswith(("http://", "https://", "data:")):
        return image
    data, mime_type = _image_bytes(image)
    return f"data:{mime_type};base64,{base64.b64encode(data).decode()}"


def _image_bytes(image: Image) -> tuple[bytes, str]:
    """(bytes, media type) of an image given as bytes, a `data:` URL or a file path."""
    if isinstance(image, bytes | bytearray | memoryview):
        data = bytes(image)
        return data, _sniffed(data, "these bytes")
    if isinstance(image, str) and image[:5].lower() == "data:":
        try:
            media_type, encoded = parse_data_url(image)
            return base64.b64decode(encoded, validate=True), media_type or "image/png"
        except (InvalidMessageError, ValueError) as exc:
            raise ValueError(f"the image's data: URL cannot be read: {exc}") from None
    if isinstance(image, str | os.PathLike):
        try:  # a regular file within the size limit, of the kind its first bytes show
            return read_media_file(image)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"image {str(image)[:80]!r} is not an http(s) or data: URL, and no such file"
            ) from None
    raise TypeError(
        f"an image must be bytes, a file path, or an http(s) or data: URL, got {_name(image)}"
    )


def _sniffed(data: bytes, what: str) -> str:
    media_type = sniff_media_type(data)
    if media_type is not None and media_type.startswith("image/"):
        return media_type
    raise ValueError(
        f"cannot tell the image type of {what} (not PNG, JPEG, GIF, WebP, HEIC or AVIF): pass "
        "a data: URL that names it, e.g. 'data:image/bmp;base64,...'"
    )


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value, default=str).decode()
    except TypeError as exc:
        raise TypeError(f"tool_result() content must be a str or JSON-ready: {exc}") from None


def _name(value: Any) -> str:
    return "None" if value is None else type(value).__name__
