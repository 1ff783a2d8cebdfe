"""Every third-party module src/kubedra imports comes from a distribution pyproject.toml declares: a runtime
dependency, or an optional extra for the few imported lazily where the feature needs them. A dependency dropped
while a module still imports it (a progress bar, a chart) fails here, not in a user's first run."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "kubedra"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _declared() -> tuple[set[str], set[str]]:
    project = PYPROJECT["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    extras = {
        _name(r) for name, reqs in project["optional-dependencies"].items() if name != "dev" for r in reqs
    }
    return runtime, extras - {"kubedra"}


def _imported_top_levels() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        if "testing" in path.relative_to(SRC).parts:  # the test helpers' own (pytest, the dev extra)
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                top = n.split(".")[0]
                if top != "kubedra" and top not in sys.stdlib_module_names:
                    found.setdefault(top, []).append(str(path.relative_to(ROOT)))
    return found


# optional modules a lazy import names, whose distribution the dev venv does not install
NOT_INSTALLED = {"pynvml": "nvidia-ml-py"}  # the nvml extra (discover --nvml)


def test_every_imported_distribution_is_declared() -> None:
    runtime, extras = _declared()
    owners = {**importlib.metadata.packages_distributions()}
    owners.update({top: [dist] for top, dist in NOT_INSTALLED.items() if top not in owners})
    undeclared = []
    for top, where in sorted(_imported_top_levels().items()):
        dists = {d.lower().replace("_", "-") for d in owners.get(top, [])}
        if not dists & (runtime | extras):
            undeclared.append(
                f"{top} ({', '.join(sorted(dists)) or 'no installed distribution'}): {where[0]}"
            )
    assert not undeclared, "imported but not declared in pyproject.toml:\n" + "\n".join(undeclared)


def test_the_check_sees_a_dropped_dependency() -> None:
    runtime, _ = _declared()
    assert "rich" in runtime  # audit --cluster's progress bars
    owners = importlib.metadata.packages_distributions()
    assert "rich" in {d.lower() for d in owners.get("rich", [])}
    assert "rich" in _imported_top_levels()
