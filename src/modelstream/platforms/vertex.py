"""Google Vertex AI: `gemini-generate-content` and `anthropic-messages` (Claude) under
`/v1/projects/{project}/locations/{location}/publishers/...`, with an OAuth access token from
Application Default Credentials (the `google` extra) or one passed as `api_key=`.

The paths and Claude's body (`anthropic_version` in it, the model out of it) are each
protocol's `vertex_request`, kept next to the encoder whose request they rewrite.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ..auth import google
from ..auth.keys import BearerSigner
from ..auth.signing import RequestSigner
from ..errors import ConfigurationError
from ..protocols.anthropic_messages.encoder import vertex_request as claude_request
from ..protocols.common.encoding import ProviderRequest
from ..protocols.descriptor import Provider
from ..protocols.gemini_generate_content.encoder import vertex_request as gemini_request
from .descriptor import AmbientCredentials, PlatformUnit

GLOBAL_ENDPOINT = "https://aiplatform.googleapis.com"  # location "global"
_PUBLISHER = r"/v1/projects/[^/]+/locations/[^/]+/publishers"  # the models' paths start so
# No key variable: an OAuth access token from Application Default Credentials, or one passed as
# `api_key=` (a bearer token). The host is the location's.
VERTEX = Provider(
    "vertex",
    "https://{location}-aiplatform.googleapis.com",
    (),
    "GOOGLE_VERTEX_BASE_URL",
    otel_name="gcp.vertex_ai",
    auth=BearerSigner,
)


@dataclass(frozen=True)
class Vertex:
    """Google Vertex AI. `project` / `location` default to `GOOGLE_CLOUD_PROJECT` /
    `GOOGLE_CLOUD_LOCATION`; location "global" is the global endpoint."""

    project: str | None = None
    location: str | None = None
    name: ClassVar[str] = "vertex"

    @property
    def unit(self) -> PlatformUnit[Vertex]:
        return PLATFORM


def _located(
    vertex: Vertex, model: str, env: Mapping[str, str], signer: RequestSigner | None
) -> Vertex:
    project = vertex.project or env.get("GOOGLE_CLOUD_PROJECT")
    location = vertex.location or env.get("GOOGLE_CLOUD_LOCATION")
    if not project or not location:
        missing = " and ".join(
            f"{var} (or Vertex({arg}=...))"
            for value, var, arg in (
                (project, "GOOGLE_CLOUD_PROJECT", "project"),
                (location, "GOOGLE_CLOUD_LOCATION", "location"),
            )
            if not value
        )
        raise ConfigurationError(f"Vertex AI needs a project and a location: set {missing}")
    return Vertex(project, location)


def _base_url(vertex: Vertex) -> str:
    if vertex.location == "global":
        return GLOBAL_ENDPOINT
    return VERTEX.base_url.format(location=vertex.location)


def _gemini(request: ProviderRequest, vertex: Vertex, model: str) -> ProviderRequest:
    assert vertex.project is not None and vertex.location is not None  # located
    return gemini_request(request, model, project=vertex.project, location=vertex.location)


def _claude(request: ProviderRequest, vertex: Vertex, model: str) -> ProviderRequest:
    assert vertex.project is not None and vertex.location is not None  # located
    return claude_request(request, model, project=vertex.project, location=vertex.location)


def _adc_signer(vertex: Vertex) -> RequestSigner:
    return google.vertex_signer()


PLATFORM = PlatformUnit(
    name="vertex",
    title="Google Vertex AI",
    provider=VERTEX,
    serves=("gemini-generate-content", "anthropic-messages"),
    settings=Vertex,
    base_url=_base_url,
    locate=_located,
    ambient=AmbientCredentials(
        source="Application Default Credentials",
        signer=_adc_signer,
        module="google.auth",
        what="Google access tokens",
        install_hint=google.INSTALL_HINT,
    ),
    requests={"gemini-generate-content": _gemini, "anthropic-messages": _claude},
    emulated_paths={
        "gemini-generate-content": (
            rf"{_PUBLISHER}/google/models/(?P<model>[^/:]+):streamGenerateContent",
        ),
        "anthropic-messages": (
            rf"{_PUBLISHER}/anthropic/models/(?P<model>[^/:]+):streamRawPredict",
        ),
    },
)
