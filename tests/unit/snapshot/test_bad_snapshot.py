"""verify -f on a malformed snapshot: exit 2 with one line naming the file (and line), never an internal error
or a silent pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.model.snapshot import FORMAT, HEADER_KEY
from kubedra.testing.cli import run

HEADER = {"format": FORMAT, "cluster": "c", "serverVersion": "v1.37.0"}


def _snapshot(header: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "metadata": {}, HEADER_KEY: header or HEADER, **fields}


NODE_BAD_STATUS = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": "x"}
SLICE_BAD_SPEC = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": "x",
}
POD_BAD_CONTAINERS = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": "x"},
}


@pytest.mark.parametrize(
    ("snapshot", "expected"),
    [
        (_snapshot(items=[NODE_BAD_STATUS]), "status: expected an object"),
        (_snapshot(items=[SLICE_BAD_SPEC]), "spec: expected an object"),
        (_snapshot(items=[POD_BAD_CONTAINERS]), "spec.containers: expected a list"),
        (_snapshot(items=[{"a": 1}]), "object has no apiVersion or kind"),
        (_snapshot(items="x"), "snapshot has no items list"),
        (_snapshot(), "snapshot has no items list"),
        (_snapshot({**HEADER, "servedAPIs": "abc"}, items=[]), "snapshot header: servedAPIs must be a list"),
        (_snapshot({**HEADER, "cluster": {"a": 1}}, items=[]), "snapshot header: cluster must be a string"),
        (_snapshot({**HEADER, "notInspected": [{"a": [1]}]}, items=[]), "notInspected[0] must be a mapping"),
    ],
)
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_bad_snapshot_is_one_line_exit_2(
    tmp_path: Path, snapshot: dict[str, Any], expected: str, suffix: str
) -> None:
    f = tmp_path / f"snap{suffix}"
    f.write_text(json.dumps(snapshot) if suffix == ".json" else yaml.safe_dump(snapshot))
    res = run("verify", "-f", str(f))
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"kubedra: error: {f}")
    assert expected in res.stderr


def test_a_well_formed_empty_snapshot_still_reads(tmp_path: Path) -> None:
    f = tmp_path / "snap.yaml"
    f.write_text(yaml.safe_dump(_snapshot(items=[])))
    assert run("verify", "-f", str(f)).exit_code in (0, 1)
