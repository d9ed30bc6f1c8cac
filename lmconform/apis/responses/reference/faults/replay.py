"""Faults of stateless replay (`store: false`, the whole transcript sent in `input`, as Codex sends it): a message of
the system or developer mid-history that crashes the server, and a transcript read from its last user message
alone."""

from __future__ import annotations

from typing import Any

from lmconform.reference.faults.registry import flag

MID_HISTORY_SYSTEM_500 = flag(
    "replay-mid-history-system-500", api="responses",
    summary="an `input` with a system or developer message after its first item gets HTTP 500",
    seen_in="openai/codex #36942 (a chat template that raises on a system message mid-list)")

REPLAY_FORGOTTEN = flag(
    "replay-forgotten", api="responses",
    summary="with `store: false`, an `input` list is read from its last user message alone: the replayed transcript "
            "is accepted with a 200 and forgotten",
    seen_in="servers that read `input` as the latest prompt (sglang PR #38690, bifrost #5410)")


def mid_history_crashes(body: dict[str, Any], faults: frozenset[str]) -> bool:
    items = body.get("input")
    return MID_HISTORY_SYSTEM_500 in faults and isinstance(items, list) and any(
        isinstance(item, dict) and item.get("role") in ("system", "developer") for item in items[1:])


def remembered(conversation: list[dict[str, Any]], store: bool, faults: frozenset[str]) -> list[dict[str, Any]]:
    """What the server reads of a turn's input: all of it, or under replay-forgotten the last user message of an
    unstored one."""
    if REPLAY_FORGOTTEN not in faults or store:
        return conversation
    return [message for message in conversation if message["role"] == "user"][-1:] or conversation
