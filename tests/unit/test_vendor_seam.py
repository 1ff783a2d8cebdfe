"""The vendor seam holds: outside ``kubedra/vendors/<vendor>/`` no module imports a vendor package or spells a
vendor's names; they ask :mod:`kubedra.vendors` (the protocol in :mod:`kubedra.vendors.base`).

``DEBT`` is the NVIDIA knowledge that still sits in the engine, per module: the count of ``vendors.nvidia``
imports and of string literals (docstrings aside) that say "nvidia" in any case. It is a ratchet, not an
allowlist: a module may not gain any, a module that loses some must lower its number here (so the debt only
shrinks), and a module not listed must have none. Each entry is work left for the vendor seam, not a
justification; the one justified exception is the vendor registry itself (``vendors/__init__.py`` names its
modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "kubedra"
VENDOR_PACKAGES = ("vendors/nvidia/", "vendors/amd/")
JUSTIFIED = {"vendors/__init__.py"}  # the registry names each vendor's module, and nothing else does

# module -> (vendors.nvidia imports, "nvidia" string literals) still there; may only go down.
DEBT: dict[str, tuple[int, int]] = {}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def leaks(path: Path) -> tuple[int, int]:
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstrings(tree)
    imports = literals = 0
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("kubedra.vendors.nvidia")
        ):
            imports += 1
        elif isinstance(node, ast.Import):
            imports += sum(a.name.startswith("kubedra.vendors.nvidia") for a in node.names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and "nvidia" in node.value.lower()
        ):
            literals += 1
    return imports, literals


def current() -> dict[str, tuple[int, int]]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(VENDOR_PACKAGES) or rel in JUSTIFIED:
            continue
        found = leaks(path)
        if found != (0, 0):
            out[rel] = found
    return out


def test_no_new_vendor_knowledge_outside_vendors() -> None:
    now = current()
    grown = {
        m: (found, DEBT.get(m, (0, 0)))
        for m, found in now.items()
        if any(n > d for n, d in zip(found, DEBT.get(m, (0, 0)), strict=True))
    }
    assert not grown, (
        "NVIDIA knowledge outside kubedra/vendors/nvidia (module: (imports, literals) now vs allowed); "
        f"ask kubedra.vendors instead: {grown}"
    )


def test_the_debt_only_shrinks() -> None:
    now = current()
    stale = {m: (now.get(m, (0, 0)), d) for m, d in DEBT.items() if now.get(m, (0, 0)) != d}
    assert not stale, f"lower DEBT to what is left (module: now vs listed): {stale}"


def test_the_lint_sees_a_leak(tmp_path: Path) -> None:
    bad = tmp_path / "leak.py"
    bad.write_text(
        '"""Docstrings may say NVIDIA."""\nfrom kubedra.vendors.nvidia import names\nGPU = "nvidia.com/gpu"\n'
    )
    assert leaks(bad) == (1, 1)
