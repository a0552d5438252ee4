"""Azure OpenAI: `openai-chat` and `openai-responses` on a resource's own host, by the v1 API
(`/openai/v1/...`) or by deployment with an `api-version`; a resource key in the `api-key`
header, or a Microsoft Entra ID token from the caller's provider (`signer=entra_id(...)`).

Azure has no ambient credentials: Entra ID needs the caller's token provider, as `signer=`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import quote

from ..auth.keys import azure_key
from ..protocols.common.encoding import ProviderRequest
from ..protocols.descriptor import Provider
from .descriptor import PlatformUnit

# The resource's own host (`https://{resource}.openai.azure.com`) is the endpoint variable's; a
# resource key goes in `api-key`, an Entra ID token as a signer.
AZURE = Provider(
    "azure",
    "",
    ("AZURE_OPENAI_API_KEY",),
    "AZURE_OPENAI_ENDPOINT",
    otel_name="azure.ai.openai",
    auth=azure_key,
)


@dataclass(frozen=True)
class Azure:
    """Azure OpenAI. Without `api_version`, the v1 API (`/openai/v1/chat/completions`,
    `/openai/v1/responses`; the model is the deployment name); with it, the deployment paths
    (`/openai/deployments/{model}/chat/completions?api-version=...`)."""

    api_version: str | None = None
    name: ClassVar[str] = "azure"

    @property
    def unit(self) -> PlatformUnit[Azure]:
        return PLATFORM


def _base_url(azure: Azure) -> str:
    return AZURE.base_url  # none: the resource's host is AZURE_OPENAI_ENDPOINT or base_url=


def _chat(request: ProviderRequest, azure: Azure, model: str) -> ProviderRequest:
    if azure.api_version is None:
        return dataclasses.replace(request, path="/openai/v1/chat/completions")
    version = quote(azure.api_version, safe="")
    path = f"/openai/deployments/{quote(model, safe='')}/chat/completions?api-version={version}"
    return dataclasses.replace(request, path=path)


def _responses(request: ProviderRequest, azure: Azure, model: str) -> ProviderRequest:
    if azure.api_version is None:
        return dataclasses.replace(request, path="/openai/v1/responses")
    # the preview Responses API is not per deployment
    version = quote(azure.api_version, safe="")
    return dataclasses.replace(request, path=f"/openai/responses?api-version={version}")


PLATFORM = PlatformUnit(
    name="azure",
    title="Azure OpenAI",
    provider=AZURE,
    serves=("openai-chat", "openai-responses"),
    settings=Azure,
    base_url=_base_url,
    requests={"openai-chat": _chat, "openai-responses": _responses},
    # the v1 API and deployments; the v1 and preview Responses APIs
    emulated_paths={
        "openai-chat": (
            r"/openai/v1/chat/completions",
            r"/openai/deployments/(?P<model>[^/]+)/chat/completions",
        ),
        "openai-responses": (r"/openai/v1/responses", r"/openai/responses"),
    },
    credentials_from="signer=entra_id(...)",
)
