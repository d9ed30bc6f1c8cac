"""docs/coverage.md against the registries: every row resolves to a check proven by a fault, to a variant, or to a
reason, and every check and fault it names exists."""

import re
from pathlib import Path

import pytest

from lmconform.checks import REGISTRY
from lmconform.reference import FAULTS
from tools.catalogue import load

DOC = Path(__file__).resolve().parent.parent / "docs" / "coverage.md"
ROW = re.compile(r"^\| ([A-Z]\d+) \|")
NAME = re.compile(r"`([^`]+)`")


def rows() -> list[dict[str, str]]:
    found = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if ROW.match(line):
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            assert len(cells) == 6, line
            found.append(dict(zip(("id", "source", "rule", "checks", "proof", "why"), cells)))
    return found


ROWS = rows()

TABLE = load()


def test_the_page_has_its_rows_each_once():
    ids = [row["id"] for row in ROWS]
    assert len(ids) >= 60 and len(ids) == len(set(ids))


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["id"])
def test_each_row_resolves_to_a_proven_check_a_variant_or_a_reason(row):
    checks, proofs = NAME.findall(row["checks"]), NAME.findall(row["proof"])
    assert all(check in REGISTRY for check in checks), f"no such check: {set(checks) - set(REGISTRY)}"
    assert all(name in FAULTS for name in proofs), f"no such fault: {set(proofs) - set(FAULTS)}"
    assert row["source"] and row["rule"] and row["why"]
    if checks:
        # Each fault named makes one of the row's checks fail: the row's claim is proven by the catalogue, or for an
        # agent check, which names the faults that prove it, by the agents' own runs (tests/test_agents.py).
        assert proofs and all(TABLE.server[name].findings & set(checks)
                              or any(name in REGISTRY[check].proven_by for check in checks) for name in proofs), row["id"]
    elif proofs:
        assert all(FAULTS[name].variant for name in proofs), f"{row['id']}: a fault without a check"
        assert row["why"].startswith(("valid", "not judged")), row["id"]
    else:
        assert row["why"].startswith("not judged: "), row["id"]


def test_every_variant_is_listed_as_a_valid_form():
    listed = {name for row in ROWS for name in NAME.findall(row["proof"])}
    assert {name for name, fault in FAULTS.items() if fault.variant} <= listed
