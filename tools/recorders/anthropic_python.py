"""The anthropic Python SDK's calls whose requests are the recorded-anthropic-python-* cases: what Claude Code's
own SDK family sends to `/v1/messages`.

    .venv/bin/python tools/recorders/anthropic_python.py http://127.0.0.1:8765

Point it at `lmconform record`: the recording endpoint writes the cases, this script writes nothing. It uses the
suite's own anthropic SDK (the one the client verdicts replay streams through). LMCONFORM_API_KEY and
LMCONFORM_MODEL set the key and the model it sends (the recordings keep neither); each call names itself in the
X-Lmconform-Label header, which becomes the case's description.
"""

from __future__ import annotations

import os
import sys

from anthropic import Anthropic

MODEL = os.environ.get("LMCONFORM_MODEL", "lmconform-reference")
# Small enough for a real model to answer quickly; a thinking budget must be at least 1024 and below max_tokens.
MAX_TOKENS = 64
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "input_schema": {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name"}},
        "required": ["location"],
    },
}


def label(text: str) -> dict[str, str]:
    return {"X-Lmconform-Label": text}


def main(base_url: str) -> None:
    # No retries: a retried request would be recorded twice. The base URL is the server's root, as
    # ANTHROPIC_BASE_URL is for Claude Code: the SDK appends /v1/messages.
    client = Anthropic(base_url=base_url.rstrip("/"), api_key=os.environ.get("LMCONFORM_API_KEY", "lm-studio"),
                       max_retries=0)
    weather = [{"role": "user", "content": "What's the weather in Paris?"}]
    client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, messages=weather, tools=[WEATHER_TOOL],
                           extra_headers=label("messages.create with a tool"))
    with client.messages.stream(model=MODEL, max_tokens=MAX_TOKENS, messages=weather, tools=[WEATHER_TOOL],
                                extra_headers=label("messages.stream helper with a tool")) as stream:
        stream.get_final_message()

    # The tool loop of every agent: the call, then the conversation sent again with the call's result.
    called = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, messages=weather, tools=[WEATHER_TOOL],
                                    tool_choice={"type": "any"}, extra_headers=label("messages.create forced tool call"))
    tool_use = next(block for block in called.content if block.type == "tool_use")
    answered = [*weather, {"role": "assistant", "content": called.content},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id,
                                              "content": "18°C and sunny"}]}]
    with client.messages.stream(model=MODEL, max_tokens=MAX_TOKENS, messages=answered, tools=[WEATHER_TOOL],
                                extra_headers=label("messages.stream helper answering a tool_use")) as stream:
        stream.get_final_message()

    with client.messages.stream(model=MODEL, max_tokens=1100, system="You are a terse assistant.",
                                thinking={"type": "enabled", "budget_tokens": 1024},
                                messages=[{"role": "user", "content": "Reply with one word: hello."}],
                                extra_headers=label("messages.stream helper with a system prompt and thinking")
                                ) as stream:
        stream.get_final_message()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} BASE_URL (the recording endpoint, e.g. http://127.0.0.1:8765)")
    main(sys.argv[1])
