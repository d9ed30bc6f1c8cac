"""A differential check of Responses streams (--upstream, lmconform.checks.proxy): the sequence of event types a
proxy passes on."""

from __future__ import annotations

from collections.abc import Iterator

from lmconform.apis.responses.checks.scope import responses_streamed
from lmconform.checks.observed import Observed
from lmconform.checks.proxy import UPSTREAM, require_both_streams
from lmconform.checks.refs import OPENAI_RESPONSES_STREAMING
from lmconform.checks.registry import check
from lmconform.normalize.data_events import read_typed_events
from lmconform.vocabulary import Failure, Level
from lmconform.wire.http import HttpExchange


def _event_types(exchange: HttpExchange) -> list[str]:
    """Responses event types with runs collapsed: how many deltas a proxy regroups into is its own business."""
    collapsed: list[str] = []
    for event in read_typed_events(exchange):
        # An event without a JSON type (`data: [DONE]`) is named by its data.
        kind = event.type or f"data: {event.event.data[:40]}"
        if not collapsed or collapsed[-1] != kind:
            collapsed.append(kind)
    return collapsed


@check("proxy.diff.event_types_preserved", level=Level.SHOULD, applies=responses_streamed, requires=UPSTREAM, kind="differential",
       ref=OPENAI_RESPONSES_STREAMING, title="a Responses stream keeps the upstream's sequence of event types",
       proven_by=("no-response-completed",))
def event_types_preserved(observed: Observed) -> Iterator[Failure]:
    require_both_streams(observed)
    seen, sent = _event_types(observed.exchange), _event_types(observed.upstream)
    if seen != sent:
        yield Failure(" → ".join(sent)[:300], " → ".join(seen)[:300], observed.exchange.body_excerpt(200))
