"""Test code lives once: a helper that two test modules need is in one of the shared places (a suite's
``helpers.py``, ``harness.py``, ``kubedra.testing``), not copied. Checked on the syntax tree: no function of
``MIN_FUNCTION_LINES`` or more whose body (docstring aside) is the same in two files, and no module-level
constant of ``MIN_CONSTANT_LINES`` or more (a ``Features(...)``, a default object) written out twice."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHERE = (ROOT / "tests", ROOT / "src" / "kubedra" / "testing")
MIN_FUNCTION_LINES = 8
MIN_CONSTANT_LINES = 5


def _modules() -> list[tuple[Path, ast.Module]]:
    out = []
    for root in WHERE:
        for path in sorted(root.rglob("*.py")):
            if "corpus" in path.relative_to(ROOT).parts:
                continue
            out.append((path, ast.parse(path.read_text(encoding="utf-8"))))
    return out


def _repeated(found: dict[str, list[str]]) -> list[list[str]]:
    return [where for where in found.values() if len({w.rsplit(":", 1)[0] for w in where}) > 1]


def duplicates(modules: list[tuple[Path, ast.Module]]) -> list[list[str]]:
    functions: dict[str, list[str]] = defaultdict(list)
    constants: dict[str, list[str]] = defaultdict(list)
    for path, tree in modules:
        name = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if (node.end_lineno or node.lineno) - node.lineno + 1 < MIN_FUNCTION_LINES:
                continue
            body = node.body
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            functions[ast.dump(ast.Module(body=body, type_ignores=[]))].append(f"{name}:{node.lineno}")
        for stmt in tree.body:
            lines = (stmt.end_lineno or stmt.lineno) - stmt.lineno + 1
            if (
                isinstance(stmt, ast.Assign | ast.AnnAssign)
                and stmt.value is not None
                and lines >= MIN_CONSTANT_LINES
            ):
                constants[ast.dump(stmt.value)].append(f"{name}:{stmt.lineno}")
    return _repeated(functions) + _repeated(constants)


def test_no_test_helper_or_constant_is_written_twice() -> None:
    assert duplicates(_modules()) == []


def test_the_check_finds_a_copy(tmp_path: Path) -> None:
    helper = "def wait(api, ns):\n" + "".join(f"    api.step({i}, ns)\n" for i in range(8))
    constant = "ALL = Features(\n    a=True,\n    b=True,\n    c=True,\n)\n"
    modules = [(ROOT / "tests" / name, ast.parse(helper + constant)) for name in ("one.py", "two.py")]
    assert duplicates(modules) == [
        ["tests/one.py:1", "tests/two.py:1"],
        ["tests/one.py:10", "tests/two.py:10"],
    ]
