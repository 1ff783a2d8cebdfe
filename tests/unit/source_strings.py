"""The string literals of kubedra's modules, as the source-sweeping tests read them (advice, plurals, versions)."""

from __future__ import annotations

import ast
from pathlib import Path


def string_literals(path: Path, *, keep_docstrings_of_commands: bool = False) -> list[tuple[int, str]]:
    """(line, text) of every string constant (f-string parts included) except docstrings, which kubedra does
    not print; ``keep_docstrings_of_commands``: a click command's docstring is its --help, so functions in
    ``commands/`` keep theirs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if (
            keep_docstrings_of_commands
            and path.parent.name == "commands"
            and isinstance(node, ast.FunctionDef)
        ):
            continue
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            docstrings.add(id(first.value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]
