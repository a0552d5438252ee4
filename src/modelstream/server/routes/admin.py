"""The admin API of virtual keys (docs/keys.md), for operators, with keys of its own:

    POST   /v1/admin/keys                   create: 201 {"key": record, "secret": "msk-..."}
    GET    /v1/admin/keys                   {"object": "list", "data": [record, ...]}
    GET    /v1/admin/keys/{key}             one record (by id or name)
    PATCH  /v1/admin/keys/{key}             change fields: the record as it is now
    POST   /v1/admin/keys/{key}/revoke      revoke (DELETE /v1/admin/keys/{key} too)
    GET    /v1/admin/spend?key=&model=&from=&to=   totals by key and served model

Every request needs `Authorization: Bearer <admin key>`; the admin keys are not client keys,
and a server without admin keys answers 403 to all of it. A record never carries its secret or
its hash: the secret is in the create answer, once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...web.bodies import json_object, read_body
from ...web.keys import BearerKeys
from ...web.refusals import Refusal, invalid_request, not_found
from ..keys.records import KeyFieldError, KeyRecord, checked_fields
from ..keys.store import KeyNotFoundError, KeyStore, NameTakenError
from ..keys.times import parse_instant

log = logging.getLogger("modelstream.server")

DEFAULT_MAX_BODY_BYTES = 64 * 1024  # a key's fields are small; the metadata is capped
DEFAULT_BODY_TIMEOUT_SECONDS = 10.0
SPEND_QUERY = ("key", "model", "from", "to")

Handler = Callable[[Request], Awaitable[Response]]


def admin_routes(
    store: KeyStore,
    admin_keys: BearerKeys,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout_seconds: float = DEFAULT_BODY_TIMEOUT_SECONDS,
) -> list[Route]:
    """The admin API's routes over `store`, open to the holders of `admin_keys` only."""

    def guarded(handler: Handler) -> Handler:
        async def answer(request: Request) -> Response:
            try:
                _check_admin(admin_keys, request.headers.get("authorization"))
                return await handler(request)
            except Refusal as refusal:
                return _refused(refusal)
            except KeyNotFoundError as exc:
                return _refused(not_found(str(exc)))
            except NameTakenError as exc:
                return _refused(Refusal(409, "ConflictError", str(exc), outcome="conflict"))
            except KeyFieldError as exc:
                return _refused(invalid_request(str(exc)))

        return answer

    async def body_of(request: Request) -> dict[str, Any]:
        raw = await read_body(request, max_body_bytes, body_timeout_seconds)
        return json_object(raw, "of a key's fields")

    async def create(request: Request) -> Response:
        fields = checked_fields(await body_of(request), creating=True)
        record, secret = await store.create(fields.pop("name"), **fields)
        log.info("admin: created virtual key %s (%r)", record.key_id, record.name)
        return JSONResponse(
            {
                "key": _shown(record),
                "secret": secret.reveal(),
                "note": "the secret is shown this once; it is stored only as a hash",
            },
            201,
        )

    async def listing(request: Request) -> Response:
        records = await store.list()
        return JSONResponse({"object": "list", "data": [_shown(r) for r in records]})

    async def show(request: Request) -> Response:
        key = request.path_params["key"]
        record = await store.get(key)
        if record is None:
            raise KeyNotFoundError(key)
        return JSONResponse(_shown(record))

    async def update(request: Request) -> Response:
        changes = checked_fields(await body_of(request), creating=False)
        record = await store.update(request.path_params["key"], **changes)
        log.info("admin: changed %s of virtual key %s", ", ".join(sorted(changes)), record.key_id)
        return JSONResponse(_shown(record))

    async def revoke(request: Request) -> Response:
        record = await store.revoke(request.path_params["key"])
        log.info("admin: revoked virtual key %s (%r)", record.key_id, record.name)
        return JSONResponse(_shown(record))

    async def spend(request: Request) -> Response:
        query = request.query_params
        unknown = sorted(set(query) - set(SPEND_QUERY))
        if unknown:
            raise invalid_request(
                f"unknown query parameter {unknown[0]!r}; the known ones are "
                + ", ".join(SPEND_QUERY)
            )
        start = _instant(query.get("from"), "from", end_of_day=False)
        end = _instant(query.get("to"), "to", end_of_day=True)
        totals = await store.spend(query.get("key"), query.get("model"), start, end)
        by_currency: dict[str, Decimal] = {}
        for total in totals:
            by_currency[total.currency] = by_currency.get(total.currency, Decimal(0)) + total.cost
        return JSONResponse(
            {
                "object": "list",
                "from": start,
                "to": end,
                "data": [total.to_json() for total in totals],
                "total": {currency: str(cost) for currency, cost in sorted(by_currency.items())},
            }
        )

    return [
        Route("/v1/admin/keys", guarded(create), methods=["POST"]),
        Route("/v1/admin/keys", guarded(listing), methods=["GET"]),
        Route("/v1/admin/keys/{key}", guarded(show), methods=["GET"]),
        Route("/v1/admin/keys/{key}", guarded(update), methods=["PATCH"]),
        Route("/v1/admin/keys/{key}", guarded(revoke), methods=["DELETE"]),
        Route("/v1/admin/keys/{key}/revoke", guarded(revoke), methods=["POST"]),
        Route("/v1/admin/spend", guarded(spend), methods=["GET"]),
    ]


def _check_admin(admin_keys: BearerKeys, authorization: str | None) -> None:
    if admin_keys.open:
        raise Refusal(
            403,
            "PermissionDeniedError",
            "this server has no admin keys, so its admin API is closed; configure admin keys "
            "to manage virtual keys over HTTP, or use `modelstream keys` on the server's store",
            outcome="forbidden",
        )
    if not admin_keys.allows(authorization):
        raise Refusal(
            401,
            "AuthenticationError",
            "missing or wrong admin key: send one of the server's admin keys as "
            "'Authorization: Bearer <key>' (client keys, virtual or not, are not admin keys)",
            outcome="unauthorized",
            headers={"www-authenticate": "Bearer"},
        )


def _instant(value: str | None, name: str, *, end_of_day: bool) -> float | None:
    if value is None or value == "":
        return None
    try:
        return parse_instant(value, end_of_day=end_of_day)
    except ValueError as exc:
        raise invalid_request(f"'{name}': {exc}") from None


def _shown(record: KeyRecord) -> dict[str, Any]:
    """A record as the API shows it: its fields and its status now (never secret or hash)."""
    return {**record.to_json(), "status": record.status(time.time())}


def _refused(refusal: Refusal) -> Response:
    return JSONResponse(refusal.body(), refusal.status, headers=refusal.headers)
