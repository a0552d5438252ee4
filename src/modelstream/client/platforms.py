"""Cloud platforms: other vendors' protocols on a cloud's own hosts, paths and credentials.

  Bedrock   `bedrock-converse-stream` at `https://bedrock-runtime.{region}.amazonaws.com`;
            chosen by a Bedrock model id, inference profile or ARN (no `platform=` needed)
  Vertex    `gemini-generate-content` and `anthropic-messages` (Claude) under
            `/v1/projects/{project}/locations/{location}/publishers/...`
  Azure     `openai-chat` and `openai-responses` on a resource's host, by the v1 API
            (`/openai/v1/...`) or by deployment with an `api-version`

A platform is asked for with `platform=` ("bedrock", "vertex", "azure", or one of the dataclasses
below with its settings). This module reads the platform's settings from the arguments and the
environment, says which protocols it serves, builds its default base URL, its ambient
credentials (the AWS chain, Google ADC) and its paths; `credentials.py` applies the rule of which
credentials go to which URL, the same for every provider.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Literal
from urllib.parse import quote, urlsplit

from ..auth.signing import RequestSigner
from ..auth.sigv4 import SigV4Signer
from ..errors import ConfigurationError
from ..protocols.anthropic_messages.encoder import vertex_request as vertex_claude_request
from ..protocols.bedrock_converse_stream import BEDROCK
from ..protocols.common.encoding import ProviderRequest
from ..protocols.common.providers import AZURE, VERTEX
from ..protocols.descriptor import Provider
from ..protocols.gemini_generate_content.encoder import vertex_request as vertex_gemini_request


@dataclass(frozen=True)
class Bedrock:
    """Amazon Bedrock. The region is `region`, else the ARN's, else `AWS_REGION`,
    `AWS_DEFAULT_REGION`, then the profile's (`profile`, else `AWS_PROFILE`) in the AWS config."""

    region: str | None = None
    profile: str | None = None
    name = "bedrock"


@dataclass(frozen=True)
class Vertex:
    """Google Vertex AI. `project` / `location` default to `GOOGLE_CLOUD_PROJECT` /
    `GOOGLE_CLOUD_LOCATION`; location "global" is the global endpoint."""

    project: str | None = None
    location: str | None = None
    name = "vertex"


@dataclass(frozen=True)
class Azure:
    """Azure OpenAI. Without `api_version`, the v1 API (`/openai/v1/chat/completions`,
    `/openai/v1/responses`; the model is the deployment name); with it, the deployment paths
    (`/openai/deployments/{model}/chat/completions?api-version=...`)."""

    api_version: str | None = None
    name = "azure"


Platform = Bedrock | Vertex | Azure
PlatformOption = Platform | Literal["bedrock", "vertex", "azure"] | None

_BY_NAME: dict[str, Platform] = {"bedrock": Bedrock(), "vertex": Vertex(), "azure": Azure()}
# the protocols each platform serves; the first is the default for a model no route knows
SERVES: dict[str, tuple[str, ...]] = {
    "bedrock": ("bedrock-converse-stream",),
    "vertex": ("gemini-generate-content", "anthropic-messages"),
    "azure": ("openai-chat", "openai-responses"),
}
PROVIDERS: dict[str, Provider] = {"bedrock": BEDROCK, "vertex": VERTEX, "azure": AZURE}
_ARN_REGION = re.compile(r"arn:aws[a-z-]*:bedrock:([a-z0-9-]+):")
_BEDROCK_HOST = re.compile(r"bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com")


def platform_of(option: PlatformOption | str) -> Platform | None:
    """The platform `platform=` asks for; a ConfigurationError naming the choices."""
    if option is None or isinstance(option, Bedrock | Vertex | Azure):
        return option
    try:
        return _BY_NAME[option]
    except (KeyError, TypeError):
        raise ConfigurationError(
            f"unknown platform {option!r}; choose one of: {', '.join(_BY_NAME)}, or pass "
            "Bedrock(...), Vertex(...) or Azure(...)"
        ) from None


def platform_for_provider(provider: str) -> Platform | None:
    """The platform a model route reached by itself (a Bedrock model id), with no settings."""
    return _BY_NAME.get(provider) if provider in PROVIDERS else None


def located(
    platform: Platform,
    model: str,
    env: Mapping[str, str],
    signer: RequestSigner | None = None,
) -> Platform:
    """`platform` with the settings the arguments left out read from the signer (a SigV4
    signer's region), the model and the environment (a Bedrock region may stay None: only a
    default URL or SigV4 from the chain needs one)."""
    if isinstance(platform, Bedrock):
        if platform.region is None and isinstance(signer, SigV4Signer):
            return dataclasses.replace(platform, region=signer.region)
        return dataclasses.replace(platform, region=_bedrock_region(platform, model, env))
    if isinstance(platform, Vertex):
        project = platform.project or env.get("GOOGLE_CLOUD_PROJECT")
        location = platform.location or env.get("GOOGLE_CLOUD_LOCATION")
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
    return platform


def default_base_url(platform: Platform | None, provider_url: str) -> str:
    """The platform's public endpoint for its region or location ("" when it has none)."""
    if isinstance(platform, Bedrock):
        return provider_url.format(region=platform.region) if platform.region else ""
    if isinstance(platform, Vertex):
        if platform.location == "global":
            return "https://aiplatform.googleapis.com"
        return provider_url.format(location=platform.location)
    return provider_url


def with_region_of(platform: Platform | None, url: str) -> Platform | None:
    """A Bedrock platform without a region takes the one its base URL names."""
    if isinstance(platform, Bedrock) and platform.region is None:
        match = _BEDROCK_HOST.fullmatch(urlsplit(url).hostname or "")
        if match:
            return dataclasses.replace(platform, region=match.group(1))
    return platform


# A client's signers over ambient credentials, by platform: one chain or ADC per client, so its
# calls reuse resolved credentials and cached tokens instead of resolving them per call.
AmbientSigners = dict[Platform, RequestSigner]


def ambient_signer(
    platform: Platform | None, cache: AmbientSigners | None = None
) -> tuple[RequestSigner, str] | None:
    """Credentials the platform finds by itself, and where from: SigV4 from the AWS chain for
    Bedrock, an access token from Google ADC for Vertex. None: the platform has none (Azure's
    Entra ID needs the caller's token provider, as `signer=`). Nothing is resolved here: the
    chain and ADC are read when the first request is signed."""
    from ..auth import aws, google

    if isinstance(platform, Bedrock):
        _require("botocore", "AWS credentials", aws.INSTALL_HINT)
        if platform.region is None:
            raise ConfigurationError(
                "no AWS region for Bedrock: set AWS_REGION or a profile's region, or pass "
                "platform=Bedrock(region=...)"
            )
        source = "the AWS credential chain"
        make: Callable[[], RequestSigner] = partial(
            aws.bedrock_signer, platform.region, platform.profile
        )
    elif isinstance(platform, Vertex):
        _require("google.auth", "Google access tokens", google.INSTALL_HINT)
        source, make = "Application Default Credentials", google.vertex_signer
    else:
        return None
    if cache is None:
        return make(), source
    if platform not in cache:
        cache[platform] = make()
    return cache[platform], source


def platform_request(
    platform: Platform | None, client_type: str, model: str, request: ProviderRequest
) -> ProviderRequest:
    """The encoded request on the platform's paths (and, for Claude on Vertex, its body)."""
    if isinstance(platform, Vertex):
        assert platform.project is not None and platform.location is not None  # located()
        build = (
            vertex_gemini_request
            if client_type == "gemini-generate-content"
            else vertex_claude_request
        )
        return build(request, model, project=platform.project, location=platform.location)
    if isinstance(platform, Azure):
        return dataclasses.replace(request, path=_azure_path(platform, client_type, model))
    return request


def _azure_path(platform: Azure, client_type: str, model: str) -> str:
    endpoint = "/responses" if client_type == "openai-responses" else "/chat/completions"
    if platform.api_version is None:
        return "/openai/v1" + endpoint
    version = quote(platform.api_version, safe="")
    if client_type == "openai-responses":  # the preview Responses API is not per deployment
        return f"/openai/responses?api-version={version}"
    return f"/openai/deployments/{quote(model, safe='')}{endpoint}?api-version={version}"


def _bedrock_region(platform: Bedrock, model: str, env: Mapping[str, str]) -> str | None:
    if platform.region:
        return platform.region
    arn = _ARN_REGION.match(model)
    if arn:
        return arn.group(1)
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if env.get(name):
            return env[name]
    if importlib.util.find_spec("botocore") is None:
        return None  # no profile to read; an error only if a region turns out to be needed
    from ..auth.aws import aws_region

    return aws_region(platform.profile or env.get("AWS_PROFILE"))


def _require(module: str, what: str, hint: str) -> None:
    if importlib.util.find_spec(module.split(".")[0]) is None or (
        "." in module and importlib.util.find_spec(module) is None
    ):
        raise ConfigurationError(f"{what} come from {module}, which is not installed: {hint}")


__all__ = [
    "Azure",
    "Bedrock",
    "Platform",
    "PlatformOption",
    "Vertex",
    "platform_of",
]
