"""The embedded reference server: a deterministic stand-in for LM Studio's OpenAI-compatible API, with a
catalogue of faults that each reproduce one real-world defect.

The suite runs every check against it clean (all must pass) and with each fault (exactly the checks about that
defect must fail). A fault is chosen at startup or per request with a path prefix:
`/faults/tool-index-one/v1/chat/completions`.
"""

from lmconform.reference.app import create_app
from lmconform.reference.faults import FAULTS, Fault, parse_faults
from lmconform.reference.server import ReferenceServer, serve_forever

__all__ = ["FAULTS", "Fault", "ReferenceServer", "create_app", "parse_faults", "serve_forever"]
