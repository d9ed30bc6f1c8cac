"""The fault catalogue: each fault reproduces one real-world defect, and changes nothing else. Importing this
package registers every fault in `FAULTS`, in catalogue order: those of chat, the model list and the HTTP framing,
then those of the Responses API, of Anthropic's Messages API and of LM Studio's native chat; then the defects of
docs/coverage.md (`coverage_*`), then the variants: valid forms real servers send differently from OpenAI, which no
check may report above INFO; then those that change one member of one kind of object (schema.py).

A check proves itself against the catalogue: it passes on the clean server and fails on exactly the faults
about its defect. That only works if a fault is narrow, so each one names a single deviation from what LM
Studio sends, and declares the checks it makes fail (`Fault.findings`), which the project's tests hold it to.
"""

# In catalogue order: each module registers its faults when it is imported.
from lmconform.reference.faults import chat, responses  # noqa: F401, I001  (registration)
from lmconform.reference.faults import messages, native_chat  # noqa: F401
from lmconform.reference.faults import coverage_chat, coverage_responses  # noqa: F401
from lmconform.reference.faults import variants  # noqa: F401
from lmconform.reference.faults import schema  # noqa: F401
from lmconform.reference.faults import generated  # noqa: F401  (last in the catalogue)
from lmconform.reference.faults.registry import FAULTS, Fault, Stage, apply, parse_faults

__all__ = ["FAULTS", "Fault", "Stage", "apply", "parse_faults"]
