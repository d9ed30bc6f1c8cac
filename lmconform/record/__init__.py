"""`lmconform record`: keep what real clients send as case files (recorder.py), answered by the reference server or
a loopback upstream (upstream.py), on a loopback port (server.py)."""

from lmconform.record.kept import UNKNOWN_PREVIOUS_MARKER, client_identity
from lmconform.record.server import RecordingServer, register
from lmconform.record.upstream import loopback_base_url

__all__ = ["UNKNOWN_PREVIOUS_MARKER", "RecordingServer", "client_identity", "loopback_base_url", "register"]
