"""OpenAI Chat Completions (`POST /chat/completions`, SSE): OpenAI and the many compatible APIs."""

from __future__ import annotations

from ...auth.keys import BearerSigner
from ...framing import SSE
from ..common.model_lists import OPENAI_MODELS
from ..common.providers import MISTRAL, OPENAI, XAI
from ..descriptor import Emulation, ModelRoute, Protocol, Provider
from .decoder import OpenAIChatDecoder
from .encoder import OpenAIChatEncoder
from .errors import ERROR_WORDS
from .gateway import GATEWAY


def _compatible(name: str, base_url: str, env: str) -> Provider:
    """A provider whose keys and base URL are configured by `{ENV}_API_KEY` / `{ENV}_BASE_URL`."""
    return Provider(name, base_url, (f"{env}_API_KEY",), f"{env}_BASE_URL")


PROTOCOL = Protocol(
    name="openai-chat",
    decoder=OpenAIChatDecoder,
    encoder=OpenAIChatEncoder,
    framing=SSE,
    error_words=ERROR_WORDS,
    auth=BearerSigner,
    provider=OPENAI,
    routes=(
        ModelRoute(("deepseek-",), _compatible("deepseek", "https://api.deepseek.com", "DEEPSEEK")),
        ModelRoute(("glm-",), _compatible("zai", "https://api.z.ai/api/paas/v4", "ZAI")),
        ModelRoute(
            ("kimi-", "moonshot-"),
            _compatible("moonshot", "https://api.moonshot.ai/v1", "MOONSHOT"),
        ),
        ModelRoute(
            ("qwen-", "qwq-"),
            _compatible(
                "alibaba", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "DASHSCOPE"
            ),
        ),
        # MiniMax writes its ids "MiniMax-M2"; prefixes compare case-insensitively
        ModelRoute(("minimax-",), _compatible("minimax", "https://api.minimax.io/v1", "MINIMAX")),
        ModelRoute(("grok-",), XAI),  # also over openai-responses: client_type= (routing)
        ModelRoute(("mistral-", "codestral-", "devstral-", "magistral-", "ministral-"), MISTRAL),
    ),
    example_model="deepseek-chat",
    emulation=Emulation(
        "modelstream.protocols.openai_chat.emulator",
        (r"/v1/chat/completions",),
        "/v1",
    ),
    models=OPENAI_MODELS,
    gateway=GATEWAY,
)
