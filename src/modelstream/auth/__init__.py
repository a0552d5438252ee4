"""Request signers: credentials added to a request that is otherwise ready to send.

Each signer has `sign(request, now) -> headers to add` (see `signing.RequestSigner`) and masks
its secrets in every repr and in `redact(text)`:

  BearerSigner / bedrock_api_key   Authorization: Bearer (API keys, Bedrock API keys)
  HeaderKeySigner                  x-api-key, x-goog-api-key, Azure api-key
  SigV4Signer / bedrock_signer     AWS SigV4; credentials from the AWS chain (extra `aws`)
  TokenSigner / vertex_signer      Bearer token from a provider: Google ADC (extra `google`)
  entra_id                         Azure Entra ID bearer from the user's token provider

docs/auth.md has the details.
"""

from .aws import AwsCredentialChain, aws_region, bedrock_signer
from .google import GoogleAccessTokens, vertex_signer
from .keys import (
    BearerSigner,
    CallableTokens,
    HeaderKeySigner,
    TokenSigner,
    anthropic_key,
    azure_key,
    bedrock_api_key,
    entra_id,
    gemini_key,
)
from .secret import Secret
from .signing import AccessToken, RequestSigner, SignableRequest, TokenProvider
from .sigv4 import AwsCredentials, AwsCredentialsProvider, SigV4Signer, StaticAwsCredentials

__all__ = [
    "AccessToken",
    "AwsCredentialChain",
    "AwsCredentials",
    "AwsCredentialsProvider",
    "BearerSigner",
    "CallableTokens",
    "GoogleAccessTokens",
    "HeaderKeySigner",
    "RequestSigner",
    "Secret",
    "SigV4Signer",
    "SignableRequest",
    "StaticAwsCredentials",
    "TokenProvider",
    "TokenSigner",
    "anthropic_key",
    "aws_region",
    "azure_key",
    "bedrock_api_key",
    "bedrock_signer",
    "entra_id",
    "gemini_key",
    "vertex_signer",
]
