"""The faults of the server as a whole rather than of one API's door: what it answers to a route it does not serve."""

from lmconform.reference.faults.registry import flag

UNKNOWN_ROUTE_200 = flag(
    "unknown-route-200", api="http",
    summary="a route the server does not serve (a typo, a missing /v1, an unknown method) is answered HTTP 200 "
            "with an error string",
    seen_in="LM Studio 0.3.14 (lmstudio-bug-tracker#618) to 0.4.17 (#2085); #1323")
