"""The openai-agents SDK's runs whose requests are the recorded-openai-agents-* cases: one agent with a function
tool, run once on the Chat Completions model class and once on the Responses one, chained.

    .cache/recorders/agents/bin/python tools/recorders/openai_agents.py http://127.0.0.1:8765

Run it with the interpreter of the SDK's own virtualenv (tools/recorders/clients.py makes it on first use): the SDK
may need another openai version than the suite's. Point it at `lmconform record`: the recording endpoint writes
the cases, this script writes nothing. Tracing is off, so nothing is sent anywhere else. LMCONFORM_API_KEY and
LMCONFORM_MODEL set the key and the model it sends; each run names itself in the X-Lmconform-Label header, which
becomes the case's description.
"""

from __future__ import annotations

import asyncio
import os
import sys

from agents import (
    Agent,
    Model,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

MODEL = os.environ.get("LMCONFORM_MODEL", "lmconform-reference")


@function_tool
def get_weather(location: str) -> str:
    """Get the current weather for a location.

    Args:
        location: City name.
    """
    return f"Sunny and 21 degrees in {location}"


def client(base_url: str, label: str) -> AsyncOpenAI:
    # No retries: a retried request would be recorded twice.
    return AsyncOpenAI(base_url=base_url.rstrip("/") + "/v1", api_key=os.environ.get("LMCONFORM_API_KEY", "lm-studio"),
                       max_retries=0, default_headers={"X-Lmconform-Label": label})


async def run(model: Model, chained: bool = False) -> None:
    agent = Agent(name="Weather", instructions="Answer with the weather tool.", tools=[get_weather], model=model)
    await Runner.run(agent, "What's the weather in Paris?", auto_previous_response_id=chained)


async def main(base_url: str) -> None:
    set_tracing_disabled(True)
    # The chat run resends the whole history with the tool's result: its second turn is a case of its own.
    await run(OpenAIChatCompletionsModel(MODEL, client(base_url, "agent run with a function tool, chat model")))
    # The Responses run chains its turns by previous_response_id, so its second turn (the tool's result) is a
    # turn of the first turn's case. Resending the history there would make a case that asks for a tool call where the
    # suite expects one of any valid request with flattened tools (responses.tools.flattened_accepted).
    await run(OpenAIResponsesModel(MODEL, client(base_url, "agent run with a function tool, chained Responses")),
              chained=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} BASE_URL (the recording endpoint, e.g. http://127.0.0.1:8765)")
    asyncio.run(main(sys.argv[1]))
