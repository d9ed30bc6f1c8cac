"""The frame every page of lmconform's is written in: one self-contained HTML document, its style and script inline,
nothing fetched, so that a page read from a CI artifact or an e-mail shows as it was written."""

from __future__ import annotations

import html
from pathlib import Path

from lmconform.files import write_text_atomically
from lmconform.verdicts.records import RecordError

BASE_STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em; color: #1d1d1d; }
h1 { margin-bottom: .2em; }"""


def html_document(title: str, style: str, body: list[str], script: str = "") -> str:
    """A page: `title` (escaped here), `style` and `script` inline, `body` placed as it is (HTML already)."""
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{BASE_STYLE}{style}</style>",
        "</head><body>",
        *body,
        *([f"<script>{script}</script>"] if script else []),
        "</body></html>",
    ]) + "\n"


def write_page(path: Path, text: str) -> None:
    """Write a page atomically; a place that cannot be written is a RecordError naming it."""
    try:
        write_text_atomically(path, text)
    except OSError as error:
        raise RecordError(f"{path}: cannot write: {error.strerror or error}") from None
