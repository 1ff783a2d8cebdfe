"""``kubedra snapshot -o FILE.json`` writes the items as the pages are read (model.snapshot.JsonWriter through
safewrite.open_atomic): memory stays at about a page however many objects the cluster has, the file is the
text an in-memory capture renders, and a listing that fails halfway is left out whole."""

from __future__ import annotations

import datetime as dt
import json
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubedra import safewrite
from kubedra.model import snapshot as snapfmt
from kubedra.snapshot import capture
from kubedra.sources import cluster
from kubedra.testing.faultapi import FaultAPI

from .helpers import run

NODES = 2000
NOW = dt.datetime(2026, 5, 1, 10, 0, tzinfo=dt.UTC)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultAPI]:
    monkeypatch.setattr(cluster, "PAGE_SIZE", 100)  # 20 pages of Nodes
    with FaultAPI(nodes=NODES) as server:
        yield server


def _snapshot(kc: Path, out: Path) -> tuple[int, str]:
    res = run(
        "snapshot",
        "--kubeconfig",
        str(kc),
        "-o",
        str(out),
        "--no-helm-releases",
        "--allow-missing",
        "metrics",
    )
    return res.exit_code, res.stderr


def _peak(fn: object) -> int:
    tracemalloc.start()
    try:
        fn()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_many_pages_are_written_in_bounded_memory(api: FaultAPI, tmp_path: Path) -> None:
    kc = api.kubeconfig(tmp_path / "kc")
    out = tmp_path / "snap.json"
    api.nodes = 100
    assert _snapshot(kc, out)[0] == 0  # imports and first-call caches outside the measure
    api.nodes = NODES // 4
    quarter = _peak(lambda: _snapshot(kc, out))
    api.nodes = NODES
    peak = _peak(lambda: _snapshot(kc, out))
    size = out.stat().st_size
    assert size > 4 << 20
    # four times the objects, about the same peak (a page or two, the client, the fake server's page)
    assert peak < size / 2, (peak, quarter, size)
    assert peak < quarter * 1.3, (peak, quarter, size)
    snap = snapfmt.load(str(out))  # reads back: header after the items
    assert [o["metadata"]["name"] for o in snap.items] == [f"node-{i:06d}" for i in range(NODES)]
    assert snap.header.cluster == "fault"
    assert [u["resource"] for u in snap.header.not_inspected] == [cluster.METRICS]
    assert [p for p in os.listdir(tmp_path) if p.startswith(safewrite.TEMP_PREFIX)] == []


def test_streamed_file_is_the_in_memory_rendering(api: FaultAPI, tmp_path: Path) -> None:
    kc = str(api.kubeconfig(tmp_path / "kc"))
    out = tmp_path / "snap.json"
    with safewrite.open_atomic(str(out)) as f:
        writer = snapfmt.JsonWriter(f)
        header = capture.capture_into(writer, kc, None, helm_releases=False, now=NOW)
        writer.finish(header)
    whole = capture.capture(kc, None, helm_releases=False, now=NOW)
    assert out.read_text() == snapfmt.render(whole, "json")
    assert writer.count == len(whole.items) == NODES
    assert writer.kinds == {"Node": NODES}
    data = json.loads(out.read_text())
    assert list(data) == ["apiVersion", "kind", "metadata", "items", "kubedra"]
    assert snapfmt.read_header(str(out)) == whole.header


def test_empty_cluster_renders_the_same(tmp_path: Path) -> None:
    with FaultAPI() as api:
        kc = str(api.kubeconfig(tmp_path / "kc"))
        out = tmp_path / "snap.json"
        with safewrite.open_atomic(str(out)) as f:
            writer = snapfmt.JsonWriter(f)
            writer.finish(capture.capture_into(writer, kc, None, helm_releases=False, now=NOW))
        whole = capture.capture(kc, None, helm_releases=False, now=NOW)
    assert out.read_text() == snapfmt.render(whole, "json")
    assert '"items": [],' in out.read_text()


def test_a_listing_that_fails_halfway_is_left_out_whole(
    api: FaultAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster, "MAX_PAGES", 3)  # three pages written, then the listing stops
    out = tmp_path / "snap.json"
    code, err = _snapshot(api.kubeconfig(tmp_path / "kc"), out)
    assert code == 2, err
    snap = snapfmt.load(str(out))
    assert [o for o in snap.items if o["kind"] == "Node"] == []
    reasons = {u["resource"]: u["reason"] for u in snap.header.not_inspected}
    assert reasons["nodes"].startswith("pagination stopped")


def test_an_unreachable_cluster_leaves_nothing(tmp_path: Path) -> None:
    with FaultAPI() as api:
        kc = api.kubeconfig(tmp_path / "kc")
    out = tmp_path / "snap.json"
    code, err = _snapshot(kc, out)  # the server is gone
    assert code == 2
    assert "cannot reach cluster" in err
    assert os.listdir(tmp_path) == ["kc"]


def test_interrupted_write_removes_its_temporary(api: FaultAPI, tmp_path: Path) -> None:
    kc = str(api.kubeconfig(tmp_path / "kc"))
    out = tmp_path / "snap.json"
    out.write_text("old\n")

    with pytest.raises(KeyboardInterrupt), safewrite.open_atomic(str(out)) as f:
        capture.capture_into(JsonWriterStop(f), kc, None, helm_releases=False)
    assert out.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["kc", "snap.json"]


class JsonWriterStop(snapfmt.JsonWriter):
    """Ctrl-C after the first page of items is on disk."""

    def add(self, obj: dict) -> None:
        super().add(obj)
        if self.count == 150:
            raise KeyboardInterrupt
