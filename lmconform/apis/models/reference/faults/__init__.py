"""The faults of the model list, in catalogue order: its defect, the one docs/coverage.md lists, its variant, and
those that change one member of its entries."""

# In catalogue order: each module registers its faults when it is imported.
from lmconform.apis.models.reference.faults import defects  # noqa: F401, I001
from lmconform.apis.models.reference.faults import coverage  # noqa: F401
from lmconform.apis.models.reference.faults import variants  # noqa: F401
from lmconform.apis.models.reference.faults import schema  # noqa: F401
