"""The shape rules of docs/architecture.md that import-linter does not check.

import-linter (make lint) keeps the layer order; these keep imports visible (at module top level outside
commands/, which loads verbs lazily for start-up time) and package borders real (no private names across them).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "kubedra"


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _package(path: Path) -> str:
    rel = path.relative_to(SRC).parts
    return rel[0].removesuffix(".py") if rel else ""


def _kubedra_import(node: ast.AST) -> str | None:
    if (
        isinstance(node, ast.ImportFrom)
        and node.level == 0
        and (node.module or "").split(".")[0] == "kubedra"
    ):
        return node.module
    if isinstance(node, ast.ImportFrom) and node.level > 0:
        return "." * node.level + (node.module or "")
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "kubedra":
                return alias.name
    return None


def in_function_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                name = _kubedra_import(node)
                if name is not None and isinstance(node, ast.stmt):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: {name}")
    return found


def private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    mine = _package(path)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").startswith("kubedra.")
        ):
            theirs = (node.module or "").split(".")[1]
            if theirs != mine:
                found += [
                    f"{path.relative_to(SRC)}:{node.lineno}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    return found


def test_kubedra_imports_sit_at_module_top_level_outside_commands() -> None:
    found = [hit for p in _modules() if _package(p) != "commands" for hit in in_function_imports(p)]
    assert found == [], (
        "imports of kubedra modules inside functions (move them to the top; a cycle means a helper belongs lower):\n"
        + "\n".join(found)
    )


def test_no_private_name_crosses_a_package_border() -> None:
    found = [hit for p in _modules() for hit in private_imports(p)]
    assert found == [], "private names imported from another package:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f():\n    from kubedra.model import parse\n", 1),
        ("def f():\n    import kubedra.model.parse\n", 1),
        ("def f():\n    from . import parse\n", 1),
        ("def f():\n    import json\n", 0),
        ("from kubedra.model import parse\n", 0),
    ],
)
def test_the_scan_sees_in_function_imports(tmp_path: Path, source: str, expected: int) -> None:
    path = tmp_path / "mod.py"
    path.write_text(source)
    assert len(in_function_imports_at(path, tmp_path)) == expected


def in_function_imports_at(path: Path, root: Path) -> list[str]:
    global SRC
    saved, SRC = SRC, root
    try:
        return in_function_imports(path)
    finally:
        SRC = saved


def test_the_scan_sees_private_imports_across_packages(tmp_path: Path) -> None:
    global SRC
    (tmp_path / "audit").mkdir()
    path = tmp_path / "audit" / "x.py"
    path.write_text("from kubedra.model.parse import _Ctx, Public\nfrom kubedra.audit.model import _own\n")
    saved, SRC = SRC, tmp_path
    try:
        assert private_imports(path) == ["audit/x.py:1: kubedra.model.parse._Ctx"]
    finally:
        SRC = saved


def _layers_contract() -> tuple[list[str], list[str]]:
    """(containers, names on the layers) of the one layers contract in pyproject.toml."""
    config = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    names = [n.strip() for line in contract["layers"] for n in line.split("|")]
    return contract["containers"], names


def top_level_units(src: Path = SRC) -> set[str]:
    """Every package and module directly under kubedra: what a layers contract has to place."""
    units = set()
    for p in src.iterdir():
        if p.is_dir() and any(p.rglob("*.py")):
            units.add(p.name)
        elif p.suffix == ".py" and p.name != "__init__.py":
            units.add(p.stem)
    return units


def test_every_package_is_on_a_layer() -> None:
    """A package or module missing from the contract is checked by nothing: import-linter only constrains
    the layers it is told about, so a new package could import anything and be imported from anywhere."""
    containers, names = _layers_contract()
    assert containers == ["kubedra"]
    assert len(names) == len(set(names)), f"named twice: {sorted({n for n in names if names.count(n) > 1})}"
    units = top_level_units()
    assert "allocator" in units
    assert "cli" in units
    assert "__main__" in units
    missing = sorted(units - set(names))
    assert not missing, f"not on any layer of the import-linter contract in pyproject.toml: {missing}"
    gone = sorted(set(names) - units)
    assert not gone, f"the import-linter contract names what src/kubedra does not have: {gone}"


def test_the_layer_check_sees_a_new_package(tmp_path: Path) -> None:
    (tmp_path / "newthing").mkdir()
    (tmp_path / "newthing" / "__init__.py").write_text("")
    (tmp_path / "tool.py").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.yaml").write_text("")
    assert top_level_units(tmp_path) == {"newthing", "tool"}
