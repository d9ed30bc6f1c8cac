"""The openai Python SDK's calls whose requests are the recorded-openai-python-* cases.

    .venv/bin/python tools/recorders/openai_python.py http://127.0.0.1:8765

Point it at `lmconform record`: the recording endpoint writes the cases, this script writes nothing. It uses the
suite's own openai SDK. LMCONFORM_API_KEY and LMCONFORM_MODEL set the key and the model it sends (the recordings
keep neither); each call names itself in the X-Lmconform-Label header, which becomes the case's description.
"""

from __future__ import annotations

import os
import sys

from openai import OpenAI

MODEL = os.environ.get("LMCONFORM_MODEL", "lmconform-reference")
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a location",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "City name"}},
            "required": ["location"],
        },
    },
}
# The Responses API takes a tool's fields at the top level (LM Studio refuses the chat form there).
CALCULATE_TOOL = {
    "type": "function",
    "name": "calculate",
    "description": "Perform mathematical calculation",
    "parameters": {
        "type": "object",
        "properties": {"expression": {"type": "string", "description": "Mathematical expression"}},
        "required": ["expression"],
    },
}


def label(text: str) -> dict[str, str]:
    return {"X-Lmconform-Label": text}


def main(base_url: str) -> None:
    # No retries: a retried request would be recorded twice.
    client = OpenAI(base_url=base_url.rstrip("/") + "/v1", api_key=os.environ.get("LMCONFORM_API_KEY", "lm-studio"),
                    max_retries=0)
    weather = [{"role": "user", "content": "What's the weather in Paris?"}]
    client.chat.completions.create(model=MODEL, messages=weather, tools=[WEATHER_TOOL],
                                   extra_headers=label("chat.completions.create with a tool"))
    with client.chat.completions.stream(model=MODEL, messages=weather, tools=[WEATHER_TOOL],
                                        extra_headers=label("chat.completions.stream helper with a tool")) as stream:
        stream.get_final_completion()

    calculate = "Calculate 7*6 using the calculate tool"
    client.responses.create(model=MODEL, input=calculate, tools=[CALCULATE_TOOL],
                            extra_headers=label("responses.create with a flattened tool"))
    with client.responses.stream(model=MODEL, input=calculate, tools=[CALCULATE_TOOL],
                                 extra_headers=label("responses.stream helper with a flattened tool")) as stream:
        stream.get_final_response()

    chain = label("responses.create, then a turn chained by previous_response_id")
    first = client.responses.create(model=MODEL, input="Remember the word 'heliotrope' for later.", extra_headers=chain)
    client.responses.create(model=MODEL, input="What word did I ask you to remember?", previous_response_id=first.id,
                            extra_headers=chain)

    answered = label("responses.create tool call, answered by function_call_output")
    called = client.responses.create(model=MODEL, input="Calculate 12/4 using the calculate tool",
                                     tools=[CALCULATE_TOOL], tool_choice="required", extra_headers=answered)
    call_id = next(item.call_id for item in called.output if item.type == "function_call")
    client.responses.create(model=MODEL, input=[{"type": "function_call_output", "call_id": call_id, "output": "3"}],
                            previous_response_id=called.id, tools=[CALCULATE_TOOL], extra_headers=answered)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} BASE_URL (the recording endpoint, e.g. http://127.0.0.1:8765)")
    main(sys.argv[1])
