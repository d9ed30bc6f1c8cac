"""Cases (model.py), read from the files beside this package (reader.py) and written by the recorder (writer.py)."""

from lmconform.cases.model import FIRST, Case, Turn, call_answer, chain_probe
from lmconform.cases.reader import CASE_SCHEMA, CASES_DIR, CaseError, case_validator, load_case, load_cases

__all__ = ["CASES_DIR", "CASE_SCHEMA", "FIRST", "Case", "CaseError", "Turn", "call_answer", "case_validator",
           "chain_probe", "load_case", "load_cases"]
