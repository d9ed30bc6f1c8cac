"""Cases (model.py), read from the files in each API's folder (reader.py) and written by the recorder (writer.py)."""

from lmconform.cases.model import FIRST, Case, HttpTurn, StdioTurn, Turn, call_answer, chain_probe
from lmconform.cases.reader import (
    CASE_SCHEMA,
    CASES_DIR,
    CaseError,
    case_file,
    case_files,
    case_validator,
    cases_folder,
    load_case,
    load_cases,
    unmatched_case_patterns,
)

__all__ = ["CASES_DIR", "CASE_SCHEMA", "FIRST", "Case", "CaseError", "HttpTurn", "StdioTurn", "Turn", "call_answer",
           "case_file", "case_files", "case_validator", "cases_folder", "chain_probe", "load_case", "load_cases",
           "unmatched_case_patterns"]
