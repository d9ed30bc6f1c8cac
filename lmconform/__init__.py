"""lmconform: conformance checks for LM Studio and other OpenAI-compatible endpoints."""

__version__ = "0.1.0"
