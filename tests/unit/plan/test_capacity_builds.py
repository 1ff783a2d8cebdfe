"""plan's capacity check builds the simulator's cluster views once with the snapshot's slices and, only when that
can change the answer, once more without them (a node on the device plugin that has slices too, no slices
derived, no Nodes): the GPUs per node and the notes are those of both builds whenever the second is left out."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kubedra.model import snapshot as snapfmt
from kubedra.plan import inventory
from kubedra.simulate import cluster
from kubedra.testing import snapshotgen

DATA = Path(__file__).parent / "data"


def _snapshot(tmp_path: Path, items: list[dict[str, Any]]) -> snapfmt.Snapshot:
    path = tmp_path / "snap.json"
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}
    doc[snapfmt.HEADER_KEY] = snapshotgen.snapshot_header("c")
    path.write_text(json.dumps(doc), encoding="utf-8")
    return snapfmt.load(str(path), trees=True, model_kinds=inventory.CAPACITY_KINDS)


def _dual(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first node with slices advertises its GPUs through the device plugin too."""
    items = copy.deepcopy(items)
    sliced = {i["spec"]["nodeName"] for i in items if i["kind"] == "ResourceSlice"}
    node = next(i for i in items if i["kind"] == "Node" and i["metadata"]["name"] in sliced)
    node["status"]["allocatable"]["nvidia.com/gpu"] = "8"
    node["status"]["capacity"]["nvidia.com/gpu"] = "8"
    return items


def _capacity(snap: snapfmt.Snapshot, monkeypatch: pytest.MonkeyPatch, both: bool) -> tuple[Any, int]:
    builds = []
    real = cluster.build_cluster

    def counted(*args: Any) -> Any:
        builds.append(args)
        return real(*args)

    with monkeypatch.context() as m:
        m.setattr(inventory, "build_cluster", counted)
        if both:
            m.setattr(inventory, "_derived_all", lambda *_: False)
        notes: list[str] = []
        got = inventory._capacity(snap, "1.35", notes)
    return (got, notes), len(builds)


@pytest.mark.parametrize(
    ("change", "builds"),
    [
        (lambda items: items, 1),  # nodes on either stack: the first build derived every plugin node
        (_dual, 2),  # a plugin node with slices too: only the second build derives it
        (lambda items: [i for i in items if i["kind"] != "Node"], 2),  # no Nodes: the second fails
        (lambda items: [i for i in items if i["kind"] != "Node" or "dra" in i["metadata"]["name"]], 2),
    ],
    ids=["mixed", "dual", "no-nodes", "dra-only"],
)
def test_second_build_only_when_it_can_change_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any, builds: int
) -> None:
    snap = _snapshot(tmp_path, change(list(snapshotgen.items(6, pods_per_node=2))))
    once, n = _capacity(snap, monkeypatch, both=False)
    twice, n2 = _capacity(snap, monkeypatch, both=True)
    assert (n, n2) == (builds, 2)
    assert once == twice
    assert once[0][1] or builds == 2  # the mixed cluster's DRA GPUs per node, all six from the first build


def test_capacity_of_the_test_fleets_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("prod", "dev", "staging"):
        snap = snapfmt.load(str(DATA / f"{name}.yaml"))
        assert _capacity(snap, monkeypatch, both=False)[0] == _capacity(snap, monkeypatch, both=True)[0]


def test_a_cluster_all_on_dra_keeps_its_slices_capacity(tmp_path: Path) -> None:
    """Every GPU node already on DRA: the build without slices has nothing to derive and fails, which must not
    throw away the first build's figures (it had answered "capacity from node labels only", {} and {})."""
    items = [
        i
        for i in snapshotgen.items(6, pods_per_node=2)
        if i["kind"] != "Node" or "dra" in i["metadata"]["name"]
    ]
    notes: list[str] = []
    dp, dra = inventory._capacity(_snapshot(tmp_path, items), "1.35", notes)
    nodes = sorted(i["metadata"]["name"] for i in items if i["kind"] == "Node")
    assert nodes
    assert sorted(dra) == nodes
    assert set(dra.values()) == {8}
    assert dp == dra  # the device-plugin view derived from the same slices
    assert not [n for n in notes if "labels only" in n or "not derived" in n]
