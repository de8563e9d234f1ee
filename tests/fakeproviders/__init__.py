"""Loopback fakes of model providers that litellm talks to over real HTTP (via `api_base`).

`FakeAnthropic` (Messages API, with Anthropic's explicit prompt-caching rules), `FakeOpenAI`
(chat completions, with OpenAI's automatic prefix caching), `FakeOllama` (/api/chat) and
`FakeLiteLLMProxy` (a LiteLLM proxy: chat completions with its cost headers), `FakeSpeech`
(`/v1/audio/speech`: tones whose length encodes the text) answer well-formed
turns for a cast (engine-independent: `Improv` reads the role from the prompt). Shared by
tests and bench/.
"""

from __future__ import annotations

from .anthropic import FakeAnthropic, flatten, min_cacheable
from .improv import Improv, count, units
from .litellm_proxy import FakeLiteLLMProxy
from .loopback import chat_completion, serve
from .ollama import FakeOllama
from .openai import FakeOpenAI
from .speech import FakeSpeech

__all__ = [
    "FakeAnthropic",
    "FakeLiteLLMProxy",
    "FakeOllama",
    "FakeOpenAI",
    "FakeSpeech",
    "Improv",
    "chat_completion",
    "count",
    "flatten",
    "min_cacheable",
    "serve",
    "units",
]
