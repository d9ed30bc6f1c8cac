"""Sources of generated cases: a case that names a source (`"source": "chains"`) is played as the examples its
source generates, each a case of its own judged by every check that applies."""

from lmconform.fuzz import chains, requests

SOURCES = {chains.SOURCE: chains, requests.SOURCE: requests}
