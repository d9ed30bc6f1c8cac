"""Chat completions' `stop`: the answer ends before the first stop string and leaves it out, all of it, however the
string was cut into tokens; and the end is reported as "stop", not as a cut at max_tokens."""

from __future__ import annotations

import json
from collections.abc import Iterator

from lmconform.apis.chat.checks.scope import chat_with_stop
from lmconform.checks.observed import Observed, in_every_answer, output_cap
from lmconform.checks.refs import OPENAI_CHAT_STOP
from lmconform.checks.registry import check
from lmconform.vocabulary import Failure, Level, NotApplicable, shown

SHORTEST_PART = 2  # characters of a stop string's start that count as a part of it flushed before the end


def _stops(observed: Observed) -> list[str]:
    stop = observed.request_body.get("stop")
    return [stop] if isinstance(stop, str) else [item for item in stop if isinstance(item, str) and item]


@check("chat.stop.left_out", level=Level.MUST, applies=chat_with_stop, ref=OPENAI_CHAT_STOP,
       title="a stop string never appears in the answer, whole or its start at the end",
       proven_by=("stop-ignored", "stop-flushed-in-stream"))
@in_every_answer
def left_out(observed: Observed) -> Iterator[Failure]:
    # MUST: the reference says the returned text will not contain the stop sequence; a client that stops on a
    # marker (a tool-call tag, a turn delimiter) reads the marker, or the start of it sent before the server saw
    # that the next tokens completed it (llama.cpp PR#15007).
    observed.require_success()
    text = observed.generation.text()
    end = observed.generation.end
    for stop in _stops(observed):
        if stop in text:
            at = text.index(stop)
            yield Failure(f"no {json.dumps(stop)} in the answer", shown(text[max(0, at - 40):at + len(stop) + 20]),
                          observed.exchange.body_excerpt(300))
            return
        start = next((stop[:size] for size in range(len(stop) - 1, SHORTEST_PART - 1, -1) if text.endswith(stop[:size])),
                     None)
        if end is not None and end.finish_reason == "stop" and start:
            yield Failure(f"an answer that leaves out all of {json.dumps(stop)}",
                          f"it ends with its start {json.dumps(start)}: {shown(text[-60:])}", str(end.source))
            return


@check("chat.stop.finish_reason_stop", level=Level.MUST, applies=chat_with_stop, ref=OPENAI_CHAT_STOP,
       title='an answer that ends before max_tokens (at a stop string) says finish_reason "stop", not "length"',
       proven_by=("stop-finish-length",))
@in_every_answer
def finish_reason_stop(observed: Observed) -> Iterator[Failure]:
    # MUST: "length" tells a client the answer was cut and to ask for more; an answer that ended at its stop
    # string is whole. Judged by the server's own count against the request's cap.
    observed.require_success()
    end = observed.generation.end
    if end is None or end.finish_reason != "length":
        raise NotApplicable("the answer does not say it was cut")
    cap = output_cap(observed.request_body, "max_completion_tokens") or output_cap(observed.request_body, "max_tokens")
    used = end.usage.get("completion_tokens") if isinstance(end.usage, dict) else None
    if cap is not None and (not isinstance(used, int) or used >= cap):
        raise NotApplicable("the answer may have used up max_tokens")
    yield Failure('finish_reason "stop"', f'"length" after {used} tokens' + (f" of {cap}" if cap else ", with no cap"),
                  str(end.source))
