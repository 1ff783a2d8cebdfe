"""docs/exit-codes.md lists, per verb, exactly the exit codes its --help documents (regenerate the table with
``KUBEDRA_REGEN=1 pytest tests/unit/cli/test_exit_codes_doc.py``)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.unit.cli.helpers import documented_exit_codes, verbs

from kubedra.commands._common import SHARED_EXIT_CODES

DOC = Path(__file__).resolve().parents[3] / "docs" / "exit-codes.md"
BEGIN, END = "<!-- BEGIN generated from --help -->", "<!-- END generated from --help -->"


def table() -> str:
    lines = ["| verb | code | meaning |", "|---|---|---|"]
    for name, cmd in sorted(verbs()):
        for code, text in documented_exit_codes(cmd).items():
            if code in SHARED_EXIT_CODES:  # the same for every verb: in the table above
                continue
            lines.append(f"| `kubedra {name}` | {code} | {text.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def test_doc_matches_help() -> None:
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN + "\n", 1)
    _, tail = rest.split(END, 1)
    want = f"{head}{BEGIN}\n{table()}{END}{tail}"
    if os.environ.get("KUBEDRA_REGEN") and text != want:
        DOC.write_text(want, encoding="utf-8")
        text = want
    assert text == want, (
        "docs/exit-codes.md is stale: KUBEDRA_REGEN=1 pytest tests/unit/cli/test_exit_codes_doc.py"
    )
