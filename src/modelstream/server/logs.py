"""How the server names a stream in its logs: by the first 8 hex digits of its response id.

A response id is the handle that reads a stream, so the whole id never reaches a log line; its
prefix still lets an operator match a line with the `X-Response-Id` a user reports, and the 96
bits left out keep it unguessable. uvicorn's access log, which prints request paths, gets a
filter that shortens the ids in `/v1/streams/{response_id}` the same way.
"""

from __future__ import annotations

import logging
import re

_RESPONSE_ID = re.compile(r"(resp_[0-9a-f]{8})[0-9a-f]{24}")
ACCESS_LOGGER = "uvicorn.access"


def stream_ref(response_id: str) -> str:
    """What log lines call the stream `response_id`."""
    return hide_response_ids(response_id)


def hide_response_ids(text: str) -> str:
    """`text` with every response id in it shortened to its reference."""
    return _RESPONSE_ID.sub(r"\1...", text)


class _ShortenResponseIds(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                hide_response_ids(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        record.msg = hide_response_ids(str(record.msg))
        return True


def hide_response_ids_in_access_log() -> None:
    """Install the filter on uvicorn's access logger (once; after uvicorn set up logging)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(f, _ShortenResponseIds) for f in logger.filters):
        logger.addFilter(_ShortenResponseIds())
