"""What one cloud platform is, as one value: its `PlatformUnit`.

A platform serves other vendors' protocols on its own hosts, paths and credentials (Amazon
Bedrock, Google Vertex AI, Azure OpenAI). The registry (`modelstream.platforms`) holds one unit
per platform; the client, server, CLI and catalogue read these descriptors instead of naming
platforms, so adding one is writing its module and one registry line
(docs/adding-a-platform.md).

Words: the *unit* is the platform's fixed description; its *settings* are the values a caller
gives (`Vertex(project=..., location=...)`, or a name whose settings come from the
environment). A settings value knows its unit (`.unit`), so everything downstream asks it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ..auth.signing import RequestSigner
from ..errors import ConfigurationError
from ..protocols.common.encoding import ProviderRequest
from ..protocols.descriptor import Provider


class PlatformSettings(Protocol):
    """A platform's settings as a caller gives them (`Bedrock(region=...)`): a frozen,
    hashable dataclass that names its platform and knows its unit."""

    name: ClassVar[str]

    @property
    def unit(self) -> PlatformUnit[Any]: ...


S = TypeVar("S", bound=PlatformSettings)

# (settings, model, environment, the caller's signer) -> the settings with what the arguments
# left out filled in; a ConfigurationError naming what to set when something required is missing
Locate = Callable[[S, str, Mapping[str, str], RequestSigner | None], S]
# (the protocol's encoded request, located settings, model) -> the request on the platform
RequestRule = Callable[[ProviderRequest, S, str], ProviderRequest]


def as_given(settings: S, model: str, env: Mapping[str, str], signer: RequestSigner | None) -> S:
    """A platform whose settings need nothing from the model or the environment."""
    return settings


@dataclass(frozen=True)
class AmbientCredentials(Generic[S]):
    """Credentials a platform finds by itself (the AWS chain, Google Application Default
    Credentials), read by an optional dependency (an extra)."""

    source: str  # where they come from, as `Endpoint.key_source` and errors say it
    # a signer over them: nothing is resolved until it signs; a ConfigurationError when the
    # settings lack what it needs (Bedrock's region)
    signer: Callable[[S], RequestSigner]
    module: str  # the optional dependency that reads them ("botocore", "google.auth")
    what: str  # what it provides, for the error when it is missing ("AWS credentials")
    install_hint: str  # how to install it ("pip install 'modelstream[aws]'")

    def signer_for(self, settings: S) -> RequestSigner:
        """A signer for `settings`; a ConfigurationError saying what to install when the
        dependency is missing."""
        top = self.module.split(".")[0]
        if importlib.util.find_spec(top) is None or (
            top != self.module and importlib.util.find_spec(self.module) is None
        ):
            raise ConfigurationError(
                f"{self.what} come from {self.module}, which is not installed: {self.install_hint}"
            )
        return self.signer(settings)


@dataclass(frozen=True)
class PlatformUnit(Generic[S]):
    """One cloud platform: which protocols it serves, where, and with which credentials."""

    name: str  # the registry key: what `platform=`, `--platform` and config files name
    title: str  # what people call it ("Google Vertex AI"), for help texts
    provider: Provider  # who runs it: a call's provider, its key variables and base-URL variable
    serves: tuple[str, ...]  # the protocols it serves; the first is the default
    settings: type[S]  # the settings dataclass; `settings()` is what its name asks for
    base_url: Callable[[S], str]  # its public endpoint for located settings ("" when none)
    locate: Locate[S] = as_given  # its settings completed from the model, env and signer
    ambient: AmbientCredentials[S] | None = None  # credentials it finds without a key
    # the settings a base URL implies (Bedrock's region from its host); None: none
    region_from_url: Callable[[S, str], S] | None = None
    # per protocol, the encoded request on the platform's paths (and body); a protocol it
    # serves without one is sent as the protocol encodes it
    requests: Mapping[str, RequestRule[S]] = field(default_factory=dict)
    # per protocol, the request paths the emulator serves for the platform (regular
    # expressions over the whole path; a `model` group names the model): `modelstream.testing`
    emulated_paths: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    no_url: str = "no default base URL"  # what a call without a base URL lacks
    url_from: str = ""  # what else gives one, said before "pass base_url=..."
    credentials_from: str = ""  # what else signs, said after "or pass api_key=..."

    def __post_init__(self) -> None:
        if self.settings.name != self.name:
            raise ValueError(f"{self.settings.__name__}.name is not {self.name!r}")
        extra = sorted((set(self.requests) | set(self.emulated_paths)) - set(self.serves))
        if extra:
            raise ValueError(
                f"{self.name} has request rules or paths for protocols it does not serve: {extra}"
            )


__all__ = [
    "AmbientCredentials",
    "Locate",
    "PlatformSettings",
    "PlatformUnit",
    "RequestRule",
    "as_given",
]
