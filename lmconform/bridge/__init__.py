"""A reference implementation of the VS Code language-model bridge protocol (vscodelm): newline-delimited
JSON-RPC 2.0 on stdin and stdout, as Symposium's `symposium-acp-agent vscodelm` speaks it (docs/bridge.md states the protocol).

The suite's `vscodelm.*` checks prove themselves on it: clean, every check holds; with each fault of
lmconform.bridge.faults, exactly the checks about that defect fail. `lmconform bridge --help` runs it. It depends
on no check, runner or plugin module: the embedded reference server and the openai SDK are all it uses.
"""

from lmconform.bridge.faults import FAULTS, Fault, parse_faults

__all__ = ["FAULTS", "Fault", "parse_faults"]
