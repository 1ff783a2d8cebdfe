"""Count words are pluralised properly everywhere ("1 finding", "2 findings", "scanned 1 file")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.unit.source_strings import string_literals

from kubedra.text import count, plural

SRC = Path(__file__).resolve().parents[2] / "src" / "kubedra"
BRACKETED = re.compile(r"[A-Za-z]\((s|es)\)")


@pytest.mark.parametrize(
    ("n", "word", "text"),
    [
        (0, "finding", "0 findings"),
        (1, "finding", "1 finding"),
        (2, "finding", "2 findings"),
        (1, "policy", "1 policy"),
        (3, "policy", "3 policies"),
        (2, "GPU", "2 GPUs"),
        (2, "GPU node", "2 GPU nodes"),
        (2, "manual item", "2 manual items"),
        (2, "pass", "2 passes"),
        (2, "day", "2 days"),
    ],
)
def test_count(n: int, word: str, text: str) -> None:
    assert count(n, word) == text


def test_irregular() -> None:
    assert count(2, "info", "info") == "2 info"
    assert count(1, "info", "info") == "1 info"
    assert plural("box") == "boxes"
    assert plural("key") == "keys"


def test_reports_say_no_word_with_an_s_in_brackets() -> None:
    """No "finding(s)" left in what kubedra prints (upstream's verbatim messages excepted)."""
    upstream = ("node(s) have", "node(s) were", "node(s) {r}", "node(s) ", "Invalid character(s)")
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for line, text in string_literals(path):
            if BRACKETED.search(text) and not any(u in text for u in upstream):
                offenders.append(f"{path.relative_to(SRC)}:{line}: {text.strip()[:100]}")
    for path in sorted(SRC.rglob("*")):
        if path.suffix in (".j2", ".html", ".md") and BRACKETED.search(path.read_text(encoding="utf-8")):
            offenders.append(str(path.relative_to(SRC)))
    assert not offenders, "\n".join(offenders)
