"""Listing the models a key may use (`client.list_models()`), sans-IO: the signed GET of each
page of the protocol's models endpoint, each page read, and the ids marked with what the model
catalogue knows of them. The clients send the requests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlencode

import orjson

from ..auth.signing import RequestSigner, SignableRequest
from ..catalogue import Catalogue, ModelInfo, default_catalogue
from ..errors import ConfigurationError, ProviderError
from ..protocols.descriptor import ModelListing
from .credentials import Endpoint
from .http_errors import provider_error_from_http
from .prepare import PreparedRequest

MAX_PAGES = 50  # a provider that never stops paging is not followed forever


@dataclass(frozen=True)
class ListedModel:
    """A model the provider lists, with its catalogue entry (None: the catalogue does not know
    it, so its limits and price are unknown)."""

    id: str
    info: ModelInfo | None

    @property
    def known(self) -> bool:
        return self.info is not None


@dataclass
class ModelListCall:
    listing: ModelListing
    endpoint: Endpoint
    model: str | None = None
    ids: list[str] = field(default_factory=list)
    _query: dict[str, str] | None = field(default_factory=dict)
    _pages: int = 0

    @classmethod
    def for_endpoint(cls, endpoint: Endpoint, model: str | None) -> ModelListCall:
        listing = endpoint.protocol.models
        if listing is None or endpoint.platform is not None:
            where = f"{endpoint.platform.name}'s " if endpoint.platform is not None else ""
            raise ConfigurationError(
                f"{where}{endpoint.client_type} has no models endpoint modelstream can list; "
                "see `modelstream models` for the catalogue"
            )
        return cls(listing, endpoint, model)

    def next_request(self, now: datetime) -> PreparedRequest | None:
        """The next page's request, signed at `now`; None when every page was read."""
        if self._query is None or self._pages >= MAX_PAGES:
            return None
        url = self.endpoint.base_url + self.listing.path
        if self._query:
            url += "?" + urlencode(self._query)
        headers = {"accept": "application/json"}
        signer: RequestSigner = self.endpoint.signer
        signed = {**headers, **signer.sign(SignableRequest("GET", url, headers, b""), now)}
        return PreparedRequest("GET", url, b"", signed)

    def read(self, status: int, headers: Mapping[str, str], body: bytes, now: float) -> None:
        """Read one page's response; a refusal raises the provider's error."""
        self._pages += 1
        if not 200 <= status < 300:
            error: ProviderError = provider_error_from_http(
                status,
                headers,
                body,
                provider=self.endpoint.provider,
                now=now,
                model=self.model,
                redact=self.endpoint.signer.redact,
                read_body=self.endpoint.protocol.read_error_body,
            )
            raise error
        try:
            page = orjson.loads(body)
        except orjson.JSONDecodeError:
            page = None
        ids, self._query = self.listing.read_page(page)
        self.ids.extend(model_id for model_id in ids if model_id not in self.ids)

    def models(self, catalogue: Catalogue | None = None) -> list[ListedModel]:
        known = catalogue or default_catalogue()
        return [ListedModel(model_id, known.lookup(model_id)) for model_id in self.ids]
