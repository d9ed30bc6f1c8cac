"""Text from a results record made inert in GitHub-flavoured Markdown, for the matrix and CI step summaries."""

from __future__ import annotations

import html
import re

MARKDOWN_ACTIVE = re.compile(r"([\\`*_~\[\]|])")


def md(text: str) -> str:
    """HTML escaped, markup and `|` backslashed, and newlines turned into `<br>` so a table cell stays on its
    line."""
    lines = (MARKDOWN_ACTIVE.sub(r"\\\1", html.escape(line, quote=False)) for line in text.splitlines() or [""])
    return "<br>".join(lines)
