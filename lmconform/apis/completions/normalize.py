"""Text completions read into the generation vocabulary: the text of the first choice, from each chunk of a stream
(`choices[0].text`) or from the body, then the end with its finish reason and usage. A completion calls no tools."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lmconform.normalize.data_events import DataEvent, read_data_events
from lmconform.normalize.events import End, Generation, Source, Text
from lmconform.normalize.reading import Reading
from lmconform.normalize.usage import COMPLETION_USAGE
from lmconform.wire.http import HttpExchange

Chunk = DataEvent  # a chunk of a completions stream is a data event of it


def first_choice(payload: Any) -> dict:
    """The choice at index 0 of a chunk or a body; {} when there is none."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    for choice in choices if isinstance(choices, list) else []:
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            return choice
    return {}


@dataclass
class CompletionStream:
    chunks: list[Chunk] = field(default_factory=list)
    generation: Generation = field(default_factory=Generation)

    def data_chunks(self) -> list[Chunk]:
        """The chunks before [DONE] whose payload is a JSON object."""
        found = []
        for chunk in self.chunks:
            if chunk.done:
                break
            if isinstance(chunk.payload, dict):
                found.append(chunk)
        return found


def normalize_completions_stream(exchange: HttpExchange) -> CompletionStream:
    stream = CompletionStream(exchange.view(read_data_events))
    finish_reason: Any = None
    usage: Any = None
    end: Source | None = None
    for chunk in stream.data_chunks():
        if chunk.payload.get("usage") is not None:
            usage = chunk.payload["usage"]
        choice = first_choice(chunk.payload)
        if isinstance(choice.get("text"), str) and choice["text"]:
            stream.generation.events.append(Text(choice["text"], "content", chunk.source))
        if choice.get("finish_reason") is not None:
            finish_reason, end = choice["finish_reason"], chunk.source
    fallback = Source("end of stream", exchange.body_excerpt(120))
    stream.generation.events.append(End(finish_reason, usage, end or fallback))
    return stream


def normalize_completions_body(body: Any) -> Generation:
    generation = Generation()
    choice = first_choice(body)
    source = Source("JSON body choices[0]", json.dumps(choice, ensure_ascii=False, default=repr)[:500])
    if isinstance(choice.get("text"), str) and choice["text"]:
        generation.events.append(Text(choice["text"], "content", source))
    usage = body.get("usage") if isinstance(body, dict) else None
    generation.events.append(End(choice.get("finish_reason"), usage, source))
    return generation


def normalize_completions(exchange: HttpExchange) -> Generation:
    """A completion in the generation vocabulary, from whichever form arrived (stream or body)."""
    if exchange.is_event_stream:
        return exchange.view(normalize_completions_stream).generation
    return normalize_completions_body(exchange.json)


READING = Reading(normalize_completions, usage=COMPLETION_USAGE)
