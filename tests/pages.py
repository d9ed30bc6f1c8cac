"""The run's page as a reader can reach it: every part packed in it (lmconform/report/packed.py: the verdict table,
the exchanges, the cases of a finding after the first of each cause) unpacked into its place, as the page's script
does when the part is shown. What a test looks for in what the page holds (a verdict, an exchange, a secret that must
not be there) it looks for in this text; what the page shows before anything is opened, in the page itself."""

import base64
import gzip
import json
import re

PACKED = re.compile(r'<script type="application/gzip" id="lmc-packed">([A-Za-z0-9+/=]*)</script>')
PLACEHOLDER = re.compile(r'data-lmc-part="(\d+)" aria-busy="true"><span class="lmc-unpacking">Unpacking…</span>')


def packed_parts(page: str) -> list[str]:
    found = PACKED.search(page)
    assert found, "the page carries no packed parts"
    return json.loads(gzip.decompress(base64.b64decode(found.group(1))))


def unpacked(page: str) -> str:
    """The page with each placeholder filled with its part, parts within parts too, and the packed script left out."""
    parts = packed_parts(page)
    text = PACKED.sub("", page)
    while PLACEHOLDER.search(text):
        text = PLACEHOLDER.sub(lambda found: f'data-lmc-part="{found.group(1)}">{parts[int(found.group(1))]}', text)
    return text
