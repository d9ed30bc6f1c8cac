"""The parts of the run's page that are shown only when opened (the verdict table, the exchanges, the cases of a
finding after the first of each cause, whatever else is folded away), carried inside the page packed: HTML built and
escaped like the rest of the page, gathered into one JSON list of fragments, gzipped and written in base64 into a
script element that the browser does not run. The page's script unpacks it (DecompressionStream) the first time a
part is needed and puts each part in its place: at once where it is in sight, when its `<details>` is opened where it
is folded away.

So the page stays one file that works offline, every verdict and every kept exchange stays in it, and what weighs
(thousands of rows of markup much alike) weighs ten to twenty-five times less. gzip is given the same time stamp
(none) every time, so a record gives the same page byte for byte.
"""

from __future__ import annotations

import base64
import gzip
import json

SCRIPT_ID = "lmc-packed"

STYLE = """
.lmc-unpacking { color: #666; font-style: italic; }
"""

# A placeholder is any element with data-lmc-part="INDEX" (of its fragment in the list). It is filled (innerHTML: the
# fragment was escaped when the page was written) once no <details> around it is closed: at load, and when a <details>
# is opened; aria-busy stays on it until then, and an event (lmc-unpacked) tells the page's other scripts. A link to a
# folded element (an exchange) opens the <details> around it.
SCRIPT = """
(function () {
  var source = document.getElementById('""" + SCRIPT_ID + """'), unpacked = null;
  function parts() {
    if (unpacked === null) {
      if (typeof DecompressionStream === 'undefined') {
        unpacked = Promise.reject(new Error('this browser cannot unpack it (it lacks DecompressionStream, which '
          + 'Chrome 80, Firefox 113, Safari 16.4 and later have)'));
      } else {
        var text = atob(source.textContent), bytes = new Uint8Array(text.length);
        for (var i = 0; i < text.length; i++) { bytes[i] = text.charCodeAt(i); }
        var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
        unpacked = new Response(stream).text().then(JSON.parse);
      }
    }
    return unpacked;
  }
  function folded(element) {
    for (var up = element.parentElement; up; up = up.parentElement) {
      if (up.tagName === 'DETAILS' && !up.open) { return true; }
    }
    return false;
  }
  function fill(within) {
    var holders = within.querySelectorAll('[data-lmc-part][aria-busy]');
    Array.prototype.forEach.call(holders, function (holder) {
      if (folded(holder) || holder.dataset.unpacking) { return; }
      holder.dataset.unpacking = 'yes';
      parts().then(function (all) {
        holder.innerHTML = all[holder.dataset.lmcPart];
        holder.removeAttribute('aria-busy');
        holder.dispatchEvent(new CustomEvent('lmc-unpacked', {bubbles: true}));
        fill(holder);
      }, function (error) {
        holder.textContent = 'Not shown: ' + error.message + '. The results record the page was written from '
          + 'holds every verdict and exchange.';
        holder.removeAttribute('aria-busy');
      });
    });
  }
  function reveal() {
    var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (var up = target; up; up = up.parentElement) { if (up.tagName === 'DETAILS') { up.open = true; } }
  }
  document.addEventListener('toggle', function (event) { if (event.target.open) { fill(event.target); } }, true);
  window.addEventListener('hashchange', reveal);
  reveal();
  fill(document);
})();
"""


class Packed:
    """The page's parts shown on demand, in the order they were placed."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def place(self, fragment: str, tag: str = "div", attributes: str = "") -> str:
        """Keep `fragment` (HTML), and give the element that shows it: empty until unpacked."""
        self.parts.append(fragment)
        return (f'<{tag}{attributes} data-lmc-part="{len(self.parts) - 1}" aria-busy="true">'
                f'<span class="lmc-unpacking">Unpacking…</span></{tag}>')

    def script(self) -> str:
        """The element that carries the parts: gzipped JSON in base64, the same bytes for the same parts."""
        packed = gzip.compress(json.dumps(self.parts, ensure_ascii=False, separators=(",", ":")).encode(), 9,
                               mtime=0)
        return (f'<script type="application/gzip" id="{SCRIPT_ID}">'
                f'{base64.b64encode(packed).decode("ascii")}</script>')
