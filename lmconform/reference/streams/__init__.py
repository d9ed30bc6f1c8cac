"""Generated answers: the clean answer to a request in a legal but unusual wire form chosen by a seed.

A form (lmconform.reference.streams.form) is a set of features, each one a way the standards allow a stream to be
written that servers and proxies rarely send: CRLF or CR line ends, `data:` without the space, comments and
keep-alives, `event:`/`id:`/`retry:` fields, data over several lines, TCP writes that split characters and CRLF
pairs, deltas of any size, empty deltas, unknown keys, any key order and JSON whitespace. Every form of a request
carries the same generation, so a client (or a proxy) that reads one form differently from another has a defect.
This is a way of rendering, not a fault: a fault changes what the server says, a form only how it is written.
"""

from lmconform.reference.streams.form import FEATURES, PLAIN, Feature, Form, features_of, parse_form
from lmconform.reference.streams.frames import AFTER_ID, EVENT_ON_CHAT, RETRY_ALONE, Trouble
from lmconform.reference.streams.render import PLAIN_SHOWS, Rendered, rendered
from lmconform.reference.streams.serve import (
    DEFAULT_PAUSE_S,
    FORM_HEADER,
    SHOWS_HEADER,
    TAG,
    TROUBLES_HEADER,
    last_user_text,
    requested_form,
    streamed,
    thought,
    untagged,
)

__all__ = ["AFTER_ID", "DEFAULT_PAUSE_S", "EVENT_ON_CHAT", "FEATURES", "FORM_HEADER", "PLAIN", "PLAIN_SHOWS",
           "RETRY_ALONE", "SHOWS_HEADER", "TAG", "TROUBLES_HEADER", "Feature", "Form", "Rendered", "Trouble", "features_of",
           "last_user_text", "parse_form", "rendered", "requested_form", "streamed", "thought", "untagged"]
