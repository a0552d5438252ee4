"""Amazon Bedrock: `bedrock-converse-stream` at `https://bedrock-runtime.{region}.amazonaws.com`,
signed with SigV4 from the AWS credential chain (the `aws` extra) or a Bedrock API key.

Bedrock model ids, inference profiles and ARNs route here by themselves (the protocol's routes,
`protocols/bedrock_converse_stream`): no `platform=` is needed. The protocol encodes Bedrock's
own paths, so the platform adds no request rule; it adds the region.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import urlsplit

from ..auth import aws
from ..auth.signing import RequestSigner
from ..auth.sigv4 import SigV4Signer
from ..errors import ConfigurationError
from ..protocols.bedrock_converse_stream import BEDROCK
from .descriptor import AmbientCredentials, PlatformUnit

_ARN_REGION = re.compile(r"arn:aws[a-z-]*:bedrock:([a-z0-9-]+):")
_BEDROCK_HOST = re.compile(r"bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com")


@dataclass(frozen=True)
class Bedrock:
    """Amazon Bedrock. The region is `region`, else the ARN's, else `AWS_REGION`,
    `AWS_DEFAULT_REGION`, then the profile's (`profile`, else `AWS_PROFILE`) in the AWS config."""

    region: str | None = None
    profile: str | None = None
    name: ClassVar[str] = "bedrock"

    @property
    def unit(self) -> PlatformUnit[Bedrock]:
        return PLATFORM


def _located(
    bedrock: Bedrock, model: str, env: Mapping[str, str], signer: RequestSigner | None
) -> Bedrock:
    """The region from a SigV4 signer, else the usual places; it may stay None: only a default
    URL or SigV4 from the chain needs one."""
    if bedrock.region is None and isinstance(signer, SigV4Signer):
        return dataclasses.replace(bedrock, region=signer.region)
    return dataclasses.replace(bedrock, region=_region(bedrock, model, env))


def _region(bedrock: Bedrock, model: str, env: Mapping[str, str]) -> str | None:
    if bedrock.region:
        return bedrock.region
    arn = _ARN_REGION.match(model)
    if arn:
        return arn.group(1)
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if env.get(name):
            return env[name]
    if importlib.util.find_spec("botocore") is None:
        return None  # no profile to read; an error only if a region turns out to be needed
    return aws.aws_region(bedrock.profile or env.get("AWS_PROFILE"))


def _base_url(bedrock: Bedrock) -> str:
    return BEDROCK.base_url.format(region=bedrock.region) if bedrock.region else ""


def _region_from_url(bedrock: Bedrock, url: str) -> Bedrock:
    """A Bedrock without a region takes the one its base URL's host names."""
    if bedrock.region is None:
        match = _BEDROCK_HOST.fullmatch(urlsplit(url).hostname or "")
        if match:
            return dataclasses.replace(bedrock, region=match.group(1))
    return bedrock


def _chain_signer(bedrock: Bedrock) -> RequestSigner:
    if bedrock.region is None:
        raise ConfigurationError(
            "no AWS region for Bedrock: set AWS_REGION or a profile's region, or pass "
            "platform=Bedrock(region=...)"
        )
    return aws.bedrock_signer(bedrock.region, bedrock.profile)


PLATFORM = PlatformUnit(
    name="bedrock",
    title="Amazon Bedrock",
    provider=BEDROCK,
    serves=("bedrock-converse-stream",),
    settings=Bedrock,
    base_url=_base_url,
    locate=_located,
    ambient=AmbientCredentials(
        source="the AWS credential chain",
        signer=_chain_signer,
        module="botocore",
        what="AWS credentials",
        install_hint=aws.INSTALL_HINT,
    ),
    region_from_url=_region_from_url,
    no_url="no region",
    url_from="pass platform=Bedrock(region=...), set AWS_REGION",
)
