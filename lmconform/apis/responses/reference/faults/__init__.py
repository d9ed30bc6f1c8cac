"""The faults of the Responses API, in catalogue order: its defects, those of what it stores of a response, those of
docs/coverage.md, the variants, those of reasoning, those of the tool types beside `function`, those of stateless replay, the
parameters Codex always sends refused, those of compaction and counting, those of the WebSocket mode, those that change one
member of one kind of object, and the one only generated requests reach."""

# In catalogue order: each module registers its faults when it is imported.
from lmconform.apis.responses.reference.faults import defects  # noqa: F401, I001
from lmconform.apis.responses.reference.faults import store  # noqa: F401
from lmconform.apis.responses.reference.faults import coverage  # noqa: F401
from lmconform.apis.responses.reference.faults import variants  # noqa: F401
from lmconform.apis.responses.reference.faults import reasoning  # noqa: F401
from lmconform.apis.responses.reference.faults import tool_types  # noqa: F401
from lmconform.apis.responses.reference.faults import replay  # noqa: F401
from lmconform.apis.responses.reference.faults import parameters  # noqa: F401
from lmconform.apis.responses.reference.faults import compaction  # noqa: F401
from lmconform.apis.responses.reference.faults import lifecycle  # noqa: F401
from lmconform.apis.responses.reference.faults import websocket  # noqa: F401
from lmconform.apis.responses.reference.faults import schema  # noqa: F401
from lmconform.apis.responses.reference.faults import generated  # noqa: F401
