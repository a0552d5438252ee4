"""AWS credentials and region from the standard AWS chain, through botocore (extra `aws`).

The chain (environment variables, shared credentials and config files with their profiles,
SSO, web identity, container and instance metadata) is large and keeps changing, so it is not
written here: botocore resolves it, and refreshes temporary credentials when they near expiry.
botocore is imported on first use only, so modelstream works without it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import ConfigurationError
from .secret import Secret
from .sigv4 import AwsCredentials, SigV4Signer

INSTALL_HINT = "pip install 'modelstream[aws]'"


def _botocore_session(profile: str | None) -> Any:
    try:
        import botocore.session
    except ImportError:
        raise ConfigurationError(
            f"AWS credentials come from botocore, which is not installed: {INSTALL_HINT}"
        ) from None
    return botocore.session.Session(profile=profile)


@contextmanager
def _chain_errors(what: str) -> Iterator[None]:
    """botocore's own errors (an unknown profile, an expired SSO login) as a ConfigurationError;
    their messages name profiles and files, never key material."""
    import botocore.exceptions

    try:
        yield
    except botocore.exceptions.BotoCoreError as error:
        raise ConfigurationError(f"{what}: {error}") from None


class AwsCredentialChain:
    """Credentials as the AWS SDKs find them, for one profile (None: `AWS_PROFILE` or default).

    The chain is resolved on first use; a refreshable source (SSO, assumed role, instance
    metadata) is refreshed by botocore inside `credentials()` when it is about to expire."""

    def __init__(self, profile: str | None = None) -> None:
        self.profile = profile
        self._resolved: Any = None
        self._lock = threading.Lock()

    def credentials(self) -> AwsCredentials:
        with self._lock:
            if self._resolved is None:
                session = _botocore_session(self.profile)
                with _chain_errors("the AWS credential chain failed"):
                    resolved = session.get_credentials()
                if resolved is None:
                    where = f"profile {self.profile!r}" if self.profile else "the AWS chain"
                    raise ConfigurationError(
                        f"no AWS credentials found in {where}: set AWS_ACCESS_KEY_ID and "
                        "AWS_SECRET_ACCESS_KEY, or configure a profile (aws configure / "
                        "aws sso login)"
                    )
                self._resolved = resolved
            with _chain_errors("refreshing AWS credentials failed"):
                frozen = self._resolved.get_frozen_credentials()
        return AwsCredentials(
            frozen.access_key,
            Secret(frozen.secret_key),
            Secret(frozen.token) if frozen.token else None,
        )

    def __repr__(self) -> str:
        return f"AwsCredentialChain(profile={self.profile!r})"


def aws_region(profile: str | None = None) -> str | None:
    """The region the AWS SDKs would use: `AWS_REGION`, `AWS_DEFAULT_REGION`, then the profile's
    `region` in the config file; None when none is set. (botocore itself reads only
    `AWS_DEFAULT_REGION`; the other SDKs and the CLI put `AWS_REGION` first.)"""
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region:  # the profile's (botocore is needed only for this)
        session = _botocore_session(profile)
        with _chain_errors("reading the AWS region failed"):
            region = session.get_config_variable("region")
    return str(region) if region else None


def bedrock_signer(region: str | None = None, profile: str | None = None) -> SigV4Signer:
    """A SigV4 signer for Bedrock with credentials and (unless given) region from the chain."""
    region = region or aws_region(profile)
    if not region:
        raise ConfigurationError(
            "no AWS region for Bedrock: set AWS_REGION or a profile's region, or pass region="
        )
    return SigV4Signer(AwsCredentialChain(profile), region=region, service="bedrock")
