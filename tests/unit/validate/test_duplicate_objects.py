"""An object defined twice in the inputs (two files, or twice in one) is named once by audit and validate, with every
file:line and what each verb does with it; simulate and migrate key objects the same way (``default`` for a
namespaced object without a namespace, none for a cluster-scoped one, ``generateName`` never a duplicate)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubedra.cli import cli

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings{ns}\ndata: {{k: '{v}'}}\n"
JOB = (
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: train-\nspec:\n  template:\n    spec:\n"
    "      restartPolicy: Never\n      containers:\n      - name: main\n        image: train:1\n"
    "        resources: {limits: {nvidia.com/gpu: 1}}\n"
)


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    # twice in a.yaml (no namespace, then default: one object), once more in b.yaml; one other object each
    a.write_text(CM.format(ns="", v=1) + "---\n" + CM.format(ns="\n  namespace: default", v=2))
    b.write_text(CM.format(ns="", v=3) + "---\n" + CM.format(ns="\n  namespace: other", v=4))
    return a, b


def _json(*args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return r.exit_code, json.loads(r.stdout)


def test_validate_names_the_three_definitions_once(tmp_path: Path) -> None:
    a, b = _inputs(tmp_path)
    code, out = _json("validate", str(tmp_path), "-o", "json")
    assert code == 0
    assert out["valid"]
    (w,) = [w for w in out["warnings"] if "defined 3 times" in w["message"]]
    assert w["source"] == {"file": str(a), "line": 1}
    assert f"({a}:1, {a}:7, {b}:1)" in w["message"]
    assert f"keeps the last ({b}:1)" in w["message"]
    assert "simulate simulates only that one" in w["message"]
    assert "migrate migrates each" in w["message"]
    assert len(out["warnings"]) == 1  # other/settings is another object


def test_audit_names_them_once_too(tmp_path: Path) -> None:
    a, b = _inputs(tmp_path)
    code, out = _json("audit", str(tmp_path), "-o", "json")
    assert code == 0  # a warning, below the default --fail-on error
    found = [f for f in out["findings"] if f["rule"] == "input.duplicate-object"]
    assert [(f["source"]["file"], f["source"]["line"]) for f in found] == [(str(a), 1)]
    assert "ConfigMap default/settings is defined 3 times" in found[0]["message"]
    assert f"the one at {b}:1" in found[0]["fix"]


def test_generate_name_is_a_new_object_each_time(tmp_path: Path) -> None:
    """Two Jobs with one generateName are two Jobs: simulate dropped the first as 'defined again'."""
    f = tmp_path / "jobs.yaml"
    f.write_text(JOB + "---\n" + JOB)
    r = CliRunner().invoke(cli, ["simulate", str(f), "--nodes", "1x8xH100-80GB"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "2 pods simulated" in r.stdout
    assert "defined again" not in r.stdout
    _, out = _json("validate", str(f), "-o", "json")
    assert not [w for w in out["warnings"] if "defined" in w["message"]]
