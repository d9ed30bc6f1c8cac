"""Sources of cases: a case that names a source (`"source": "chains"`) is played as the examples its source makes,
each a case of its own judged by every check that applies. Every source offers the same few functions: whether a
run plays it (`plays`), the examples a check's scope is decided on (`representatives`), the examples themselves
(`search`, with a finding shrunk where the source generates them) and how one reads (`describe`). `chains` and
`requests` generate requests; `agents` runs a real coding agent, whose requests are the examples."""

from lmconform.fuzz import agents, chains, requests

SOURCES = {chains.SOURCE: chains, requests.SOURCE: requests, agents.SOURCE: agents}
