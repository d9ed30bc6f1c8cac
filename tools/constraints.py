"""`python -m tools.constraints`: writes the constraints of every request schema into docs/schemas.md (the section
"Constraints of the requests"), from the schemas, as `lmconform fuzz --list-violations` lists them;
tests/test_violations.py fails when the page is behind the schemas."""

from __future__ import annotations

from pathlib import Path

from lmconform.fuzz.listing import constraints_markdown

PAGE = Path(__file__).resolve().parent.parent / "docs" / "schemas.md"
START, END = "<!-- constraints: written by python -m tools.constraints -->", "<!-- end of constraints -->"


def main() -> None:
    text = PAGE.read_text()
    before, _, rest = text.partition(START)
    _, _, after = rest.partition(END)
    PAGE.write_text(f"{before}{START}\n\n{constraints_markdown()}\n{END}{after}")


if __name__ == "__main__":
    main()
