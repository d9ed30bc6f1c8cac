"""The faults of chat completions (and of the HTTP framing of its streams), in catalogue order: its defects, those of
docs/coverage.md, the variants, those of reasoning and JSON mode, those that change one member of a chunk or body, and those only generated
requests reach."""

# In catalogue order: each module registers its faults when it is imported.
from lmconform.apis.chat.reference.faults import defects  # noqa: F401, I001
from lmconform.apis.chat.reference.faults import coverage  # noqa: F401
from lmconform.apis.chat.reference.faults import variants  # noqa: F401
from lmconform.apis.chat.reference.faults import reasoning  # noqa: F401
from lmconform.apis.chat.reference.faults import schema  # noqa: F401
from lmconform.apis.chat.reference.faults import generated  # noqa: F401
