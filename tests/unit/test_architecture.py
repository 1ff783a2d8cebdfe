"""The shape docs/architecture.md asks of src/kubedra, measured on the source: versions come from data/versions.yaml (read by
kubedra.k8s.versions), not from literals spread over the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "kubedra"

# At most this many version literals may stay in Python; each one left should have a reason.
MAX_VERSION_LITERALS = 10
_RELEASE = re.compile(r"^v?1\.\d\d(\.\d+)?$")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are statements of their own (docstrings, bare strings)."""
    return {
        id(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
    }


def _is_release_pair(args: list[ast.expr]) -> bool:
    """``1, 36``: two int constants that read as a Kubernetes release (major 1, a two-digit minor)."""
    if len(args) != 2 or not all(isinstance(a, ast.Constant) and type(a.value) is int for a in args):
        return False
    major, minor = (a.value for a in args)  # type: ignore[attr-defined]
    return bool(major == 1 and 10 <= minor < 100)


def _pair_of(node: ast.AST) -> list[ast.expr]:
    """The elements of a tuple, or the arguments of a call (but ``range``)."""
    if isinstance(node, ast.Tuple):
        return node.elts
    if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id == "range"):
        return node.args
    return []


def _is_minor_comparison(node: ast.AST) -> bool:
    """``minor >= 36``, ``target.minor < 35``: a release's minor compared with a two-digit constant."""
    if not isinstance(node, ast.Compare):
        return False
    sides = [node.left, *node.comparators]
    minor = any(
        (isinstance(s, ast.Attribute) and "minor" in s.attr) or (isinstance(s, ast.Name) and "minor" in s.id)
        for s in sides
    )
    return minor and any(
        isinstance(s, ast.Constant) and type(s.value) is int and 20 <= s.value < 100 for s in sides
    )


def version_literals(root: Path = SRC) -> list[str]:
    """``file:line: literal`` for every release written in Python under ``root``: strings such as ``"1.37"`` or
    ``"v1.37.2"``,
    tuples such as ``(1, 36)``, calls such as ``Version(1, 35)`` and a minor compared with a number
    (``minor >= 36``); docstrings and comments are not code."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        where = path.relative_to(root.parent)
        hits: list[tuple[int, int, str]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in docs and _RELEASE.match(node.value):
                    hits.append((node.lineno, node.col_offset, repr(node.value)))
            elif isinstance(node, ast.expr) and (
                _is_release_pair(_pair_of(node)) or _is_minor_comparison(node)
            ):
                hits.append((node.lineno, node.col_offset, ast.unparse(node)))
        found += [f"{where}:{line}: {text}" for line, _, text in sorted(hits)]
    return found


def test_version_literals_live_in_the_data_file() -> None:
    found = version_literals()
    assert len(found) <= MAX_VERSION_LITERALS, (
        f"{len(found)} version literals in src/kubedra (at most {MAX_VERSION_LITERALS}); put the fact into "
        "data/versions.yaml and read it through kubedra.k8s.versions (since/holds/testbed/DEFAULT_TARGET):\n"
        + "\n".join(found)
    )


def test_the_scan_sees_each_form(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        '"""Docstrings may say 1.37."""\n'
        'DEFAULT = "1.37"\n'
        "if release >= (1, 36) or target < Version(1, 35):\n"
        "    pass\n"
        "ok = v.minor >= 36 and minor - 1 > 0\n"
        'KUBELET = "v1.37.2"\n'
        'for i in range(1, 10):\n    """1.36"""\n'
        "# 1.34 in a comment\n",
        encoding="utf-8",
    )
    assert version_literals(pkg) == [
        "pkg/m.py:2: '1.37'",
        "pkg/m.py:3: (1, 36)",
        "pkg/m.py:3: Version(1, 35)",
        "pkg/m.py:5: v.minor >= 36",
        "pkg/m.py:6: 'v1.37.2'",
    ]


# No module longer than this: a longer one is split by concern (as sources/files.py and validate/engine.py were).
MAX_MODULE_LINES = 600


def long_modules(root: Path = SRC, limit: int = MAX_MODULE_LINES) -> list[str]:
    """``file: N lines`` for every module under ``root`` longer than ``limit`` lines (as ``wc -l`` counts)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_bytes().count(b"\n")
        if lines > limit:
            found.append(f"{path.relative_to(root.parent)}: {lines} lines")
    return found


def test_no_module_over_the_limit() -> None:
    found = long_modules()
    assert not found, (
        f"modules over {MAX_MODULE_LINES} lines in src/kubedra (split them by concern):\n" + "\n".join(found)
    )


def test_the_size_check_counts_lines(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "short.py").write_text("x = 1\n" * 3, encoding="utf-8")
    (pkg / "long.py").write_text("x = 1\n" * 5, encoding="utf-8")
    assert long_modules(pkg, limit=4) == ["pkg/long.py: 5 lines"]


# Python the project runs that mypy does not check yet, each with its reason; the list may only shrink.
UNTYPED_PYTHON = {
    "deploy": "the chart's in-cluster runner (deploy/chart/kubedra/files/run.py) is not annotated yet",
    "vulture_whitelist.py": "names for vulture to see as used, not code that runs",
}


def test_mypy_checks_every_python_folder_and_every_runner_uses_its_config() -> None:
    """`make typecheck` and pre-commit run a bare `mypy`, so pyproject's `files` decides what is checked: every
    top-level folder with Python in it (src, tests, benchmarks, scripts) is there, or in UNTYPED_PYTHON."""
    import subprocess
    import tomllib

    import yaml

    root = SRC.parents[1]
    files = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    if not tracked:  # not a git checkout (an sdist): the folders that hold Python
        tracked = [str(p.relative_to(root)) for p in root.glob("*/**/*.py") if ".venv" not in p.parts]
    tops = {p.split("/", 1)[0] for p in tracked}
    covered = {f.split("/", 1)[0] for f in files}
    assert {"src", "tests", "benchmarks", "scripts"} <= covered, files
    assert tops - covered == set(UNTYPED_PYTHON), (tops - covered, UNTYPED_PYTHON)
    hooks = [
        h for r in yaml.safe_load((root / ".pre-commit-config.yaml").read_text())["repos"] for h in r["hooks"]
    ]
    mypy = next(h for h in hooks if h["id"] == "mypy")
    assert mypy["entry"].split()[-1].endswith("mypy"), mypy  # no paths after it: pyproject's files apply
    assert mypy.get("pass_filenames") is False, mypy
    make = (root / "Makefile").read_text()
    assert re.search(r"^typecheck:.*\n\t\$\(BIN\)/mypy\n", make, re.M), "make typecheck runs a bare mypy"
