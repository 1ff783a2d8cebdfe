"""Large JSON snapshots are read item by item by audit -f, verify -f and plan (model.snapshotdata.streamed):
the same output as a whole read of the same file, hostile input still one line and exit 2, a YAML snapshot
over the whole-read bound refused with the JSON advice. STREAM_MIN_BYTES is lowered here (0: every JSON
snapshot is streamed) instead of writing files of hundreds of MiB."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from tests.unit.verify import test_verify as tv

from kubedra.model import snapshot as snapfmt
from kubedra.model import snapshotdata
from kubedra.sources import files, jsonstream
from kubedra.sources.documents import LazyNode
from kubedra.testing import snapshotgen
from kubedra.testing.cli import run
from kubedra.verify import checks as vc

HERE = Path(__file__).resolve().parents[1]
PLAN = HERE / "plan" / "data"
SNAPSHOTS = [
    PLAN / "prod.yaml",
    PLAN / "dev.yaml",
    PLAN / "staging.yaml",
    HERE / "audit/data/snapshot-prod-eu.yaml",
]
WHOLE = 1 << 62


def _json(src: Path, dst: Path, header_first: bool = False) -> str:
    """``src`` (a YAML snapshot) as ``kubedra snapshot -o FILE.json`` writes it (header last), or header first."""
    text = snapfmt.render(snapfmt.load(str(src)), "json")
    if header_first:
        data = json.loads(text)
        text = json.dumps({snapfmt.HEADER_KEY: data.pop(snapfmt.HEADER_KEY), **data}, indent=1)
    dst.write_text(text, encoding="utf-8")
    return str(dst)


def _both(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[Any, Any]:
    """The run with the file read whole and the one with it streamed as a large file; a small file's reading
    (streamed, each item's lines composed when asked for) is checked here to be byte for byte the whole one."""
    monkeypatch.setattr(snapshotdata, "STREAM_MIN_BYTES", WHOLE)
    monkeypatch.setattr(snapshotdata, "STREAM_SMALL", False)
    whole = run(*args)
    monkeypatch.setattr(snapshotdata, "STREAM_SMALL", True)
    small = run(*args)
    assert (small.exit_code, small.stdout, small.stderr) == (whole.exit_code, whole.stdout, whole.stderr)
    monkeypatch.setattr(snapshotdata, "STREAM_MIN_BYTES", 0)
    streamed = run(*args)
    return whole, streamed


def _same(whole: Any, streamed: Any) -> None:
    assert (streamed.exit_code, streamed.stdout, streamed.stderr) == (
        whole.exit_code,
        whole.stdout,
        whole.stderr,
    )
    assert whole.exit_code in (0, 1, 2)
    assert whole.stdout.strip()


@pytest.mark.parametrize("src", SNAPSHOTS, ids=lambda p: p.stem)
@pytest.mark.parametrize("verb", ["audit", "verify"])
@pytest.mark.parametrize("header_first", [False, True])
def test_streamed_equals_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, src: Path, verb: str, header_first: bool
) -> None:
    path = _json(src, tmp_path / "snap.json", header_first)
    for fmt in ("json", "table"):
        _same(*_both(monkeypatch, verb, "-f", path, "-o", fmt))


def test_streamed_plan_equals_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("prod", "dev", "staging"):
        _json(PLAN / f"{name}.yaml", tmp_path / f"{name}.json")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text((PLAN / "fleet.yaml").read_text().replace(".yaml\n", ".json\n"))
    for fmt in ("json", "markdown"):
        whole, streamed = _both(monkeypatch, "plan", "--fleet", str(fleet), "-o", fmt)
        _same(whole, streamed)
        assert whole.exit_code == 1  # prod has a blocker: the comparison covers audit findings in a plan


BROKEN = [p[0] for p in tv.test_broken_states_fail_with_clear_messages.pytestmark[0].args[1]]


@pytest.mark.parametrize("change", [lambda i: i, *BROKEN])
def test_streamed_verify_of_broken_states(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any
) -> None:
    """Every broken state of the verify tests reads the same streamed (only verify's kinds kept)."""
    path = tv.snap(tmp_path, change(tv.healthy()), "s.json")
    base = tv.snap(tmp_path, tv.healthy(), "base.json")
    whole, streamed = _both(monkeypatch, "verify", "-f", path, "--baseline", base, "-o", "json")
    _same(whole, streamed)
    assert whole.exit_code == (0 if change(tv.healthy()) == tv.healthy() else 1)


def _snap(items: Any, header: Any = None, **top: Any) -> str:
    head = header or {"format": snapfmt.FORMAT, "cluster": "c", "serverVersion": "v1.37.0"}
    return json.dumps(
        {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items, "kubedra": head, **top}
    )


NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (_snap([NODE, NODE])[:-40], "invalid JSON"),  # truncated
        (_snap([NODE, {**NODE, "status": "x"}]), "status: expected an object"),
        (_snap([NODE, {"a": 1}]), "object has no apiVersion or kind"),
        (_snap([NODE, 7]), "expected a Kubernetes object"),
        (_snap([NODE], {"format": "kubedra.io/snapshot/v9"}), "unsupported snapshot format"),
        (_snap([NODE], "kubedra.io/snapshot/v1"), "not a kubedra snapshot"),
        (
            json.dumps({"kind": "List", "items": [NODE], "note": "kubedra.io/snapshot/v1"}),
            "not a kubedra snapshot",
        ),
        (_snap("x"), "snapshot has no items list"),
        (json.dumps({"kind": "List", "items": [NODE] * 3}), "not a kubedra snapshot"),  # no mark: not decoded
        (b'{"items": [], "kubedra": "kubedra.io/snapshot/\xff"}', "not a UTF-8 text file"),
    ],
)
@pytest.mark.parametrize("verb", ["verify", "plan"])
def test_hostile_streamed_snapshot_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str | bytes, needle: str, verb: str
) -> None:
    monkeypatch.setattr(snapshotdata, "STREAM_MIN_BYTES", 0)
    f = tmp_path / "snap.json"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    if verb == "plan":
        (tmp_path / "fleet.yaml").write_text(
            "kind: Fleet\nclusters:\n- {name: c, snapshot: snap.json, distribution: kubeadm}\n"
        )
        res = run("plan", "--fleet", str(tmp_path / "fleet.yaml"))
    else:
        res = run("verify", "-f", str(f))
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert needle in res.stderr, res.stderr


def test_audit_reports_a_malformed_streamed_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshotdata, "STREAM_MIN_BYTES", 0)
    f = tmp_path / "snap.json"
    f.write_text(_snap([NODE, NODE])[:-40], encoding="utf-8")
    res = run("audit", "-f", str(f), "-o", "json")
    assert res.exit_code == 2, res.output
    (finding,) = json.loads(res.stdout)["findings"]
    assert finding["rule"] == "input.malformed"
    assert "invalid JSON" in finding["message"]


def test_mark_is_looked_for_only_near_the_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot header in the middle of a file over twice the window is not looked for: bounded reading."""
    monkeypatch.setattr(snapshotdata, "MARK_WINDOW", 100)
    f = tmp_path / "snap.json"
    pad = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x" * 200}}
    f.write_text(_snap([pad], None, zz=[pad]))
    middle = f.read_text().index(snapfmt.FORMAT)
    assert 100 < middle < f.stat().st_size - 100
    assert not snapshotdata.has_mark(str(f))
    f.write_text(_snap([pad]))  # header last, as kubedra snapshot -o FILE.json writes it
    assert snapshotdata.has_mark(str(f))


def test_read_header_of_a_streamed_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _json(PLAN / "dev.yaml", tmp_path / "dev.json")
    whole = snapfmt.read_header(path)
    monkeypatch.setattr(snapshotdata, "STREAM_MIN_BYTES", 0)
    assert whole is not None
    assert snapfmt.read_header(path) == whole
    (tmp_path / "list.json").write_text(json.dumps({"kind": "List", "items": [NODE]}))
    assert snapfmt.read_header(str(tmp_path / "list.json")) is None


def test_large_yaml_snapshot_advises_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    f = tmp_path / "big.yaml"
    f.write_text((PLAN / "dev.yaml").read_text())
    res = run("verify", "-f", str(f))
    assert res.exit_code == 2
    assert res.stdout == ""
    assert "a YAML snapshot is read whole, at most" in res.stderr
    assert "`kubedra snapshot -o snapshot.json`" in res.stderr


def test_streamed_items_share_repeated_strings(tmp_path: Path) -> None:
    """The items of a streamed snapshot are kept whole (audit, plan): equal data, one copy of each key and
    short string across items; a long string is not looked up."""
    long = "x" * (jsonstream.SHARED_MAX_LEN + 1)
    items = [
        {**NODE, "metadata": {"name": f"n{i}", "labels": {"pool": "h100", "note": long}}} for i in range(3)
    ]
    f = tmp_path / "snap.json"
    f.write_text(_snap(items))
    with snapshotdata.streamed(str(f)) as stream:
        got = [item for _, item in stream.items()]
    assert got == items
    first, second = got[0]["metadata"], got[1]["metadata"]
    assert next(iter(first)) is next(iter(second))  # the key "name"
    assert first["labels"]["pool"] is second["labels"]["pool"]
    assert first["labels"]["note"] is not second["labels"]["note"]
    assert jsonstream.shared([{"a": ["b", 1, None]}], {}) == [{"a": ["b", 1, None]}]


@pytest.mark.parametrize("keep", ["verify", "plan"])
def test_small_snapshot_is_read_item_by_item(tmp_path: Path, keep: str) -> None:
    """A JSON snapshot under the large-file bound takes the streamed path too: no node tree of the whole file
    (about 1.5 MB per node of a mixed cluster under tracemalloc), each item's lines composed when asked for.
    Memory per node stays that of the kept objects at 40 and 80 nodes, and the peak grows with the nodes."""
    kinds, slim = (vc.KINDS, vc.slim_pod) if keep == "verify" else (None, None)
    kept, peaks, sources = {}, {}, set()
    for n in (40, 80):
        path = str(tmp_path / f"mixed-{n}.json")
        snapshotgen.write(path, n)
        assert not snapshotdata.should_stream(path)  # below the large-file bound
        tracemalloc.start()
        try:
            snap = snapfmt.load(path, kinds=kinds, slim=slim)
            kept[n], peaks[n] = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        sources |= {type(d.node_source) for d in snap.documents}
        del snap
    for n, size in kept.items():
        assert size / n < 500_000, f"{size / n:,.0f} bytes kept per node at {n} nodes"
    assert (peaks[80] - peaks[40]) / 40 < 500_000, "peak per added node"
    assert sources == {LazyNode}


def test_audit_streams_a_small_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """audit -f reads a JSON snapshot under the large-file bound item by item, as verify and plan do (before, it
    decoded the whole text into dicts beside the text), with the output of the whole read."""
    path = str(tmp_path / "mixed.json")
    snapshotgen.write(path, 8)
    assert not snapshotdata.should_stream(path)
    opened: list[str] = []
    real = snapshotdata.streamed

    def spy(name: str, keep_text: bool = False, trees: bool = False) -> Any:
        opened.append(name)
        return real(name, keep_text, trees)

    monkeypatch.setattr(snapshotdata, "streamed", spy)
    monkeypatch.setattr(snapshotdata, "STREAM_SMALL", False)
    whole = run("audit", "-f", path, "-o", "json")
    assert opened == []
    monkeypatch.setattr(snapshotdata, "STREAM_SMALL", True)
    small = run("audit", "-f", path, "-o", "json")
    assert opened == [path]
    _same(whole, small)


@pytest.mark.parametrize("verb", ["audit", "plan"])
def test_shared_parts_are_left_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verb: str) -> None:
    """audit -f and plan read a streamed snapshot with equal mappings and lists shared across items
    (``trees``): a check that changed one would change every item sharing it. After each verb's run, every item
    it read (its kinds all, nodes, pods, claims, slices, DaemonSets) still equals the file's, and parts were
    shared indeed."""
    path = tmp_path / "mixed.json"
    snapshotgen.write(str(path), 6)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        "apiVersion: kubedra.io/v1alpha1\nkind: Fleet\nclusters:\n"
        "- {name: mixed, snapshot: mixed.json, distribution: kubeadm}\n"
    )
    read: list[Any] = []
    real = jsonstream.JsonListStream.items

    def spy(self: jsonstream.JsonListStream) -> Any:
        for line, item in real(self):
            if self.trees is not None:
                read.append(item)
            yield line, item

    monkeypatch.setattr(jsonstream.JsonListStream, "items", spy)
    args = ("audit", "-f", str(path)) if verb == "audit" else ("plan", "--fleet", str(fleet))
    result = run(*args, "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert read == json.loads(path.read_text())["items"]
    pods = [o for o in read if o["kind"] == "Pod"]
    assert len({id(p["status"]["conditions"]) for p in pods}) < len(pods) / 4


def _pod(name: str, containers: Any, tolerations: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers, "nodeName": "n"}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"}, "spec": spec}


GOOD = [{"name": "main", "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": "1"}}}]
BAD = [{"name": "main", "resources": {"limits": {"cpu": "lots"}}}]


@pytest.mark.parametrize(
    ("pods", "needle"),
    [
        ([_pod("a", GOOD), _pod("b", GOOD), _pod("c", BAD)], "spec.containers[0].resources.limits.cpu"),
        ([_pod("a", GOOD), _pod("b", GOOD, [{"key": 1}]), _pod("c", GOOD)], "spec.tolerations[0].key"),
        ([_pod("a", BAD), _pod("b", BAD)], "invalid quantity"),
    ],
)
def test_plan_checks_pods_whose_parts_are_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pods: list[Any], needle: str
) -> None:
    """plan keeps no Pod model: a streamed snapshot's Pods are only checked, each part the reader shares
    (equal containers, tolerations) parsed once; a malformed one is still the same one line, at the same
    line, as when the file is read whole, and the first malformed pod is the one named."""
    f = tmp_path / "snap.json"
    f.write_text(json.dumps(json.loads(_snap([NODE, *pods])), indent=1), encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("kind: Fleet\nclusters:\n- {name: c, snapshot: snap.json, distribution: kubeadm}\n")
    whole, streamed = _both(monkeypatch, "plan", "--fleet", str(fleet), "-o", "json")
    # the same message; a large streamed file names the item's line (no node tree), a whole one the field's
    line = re.compile(r"snap\.json:(\d+):")
    assert (streamed.exit_code, streamed.stdout, line.sub("", streamed.stderr)) == (
        2,
        "",
        line.sub("", whole.stderr),
    )
    assert needle in whole.stderr, whole.stderr
    bad = next(i for i, p in enumerate(pods) if p["spec"]["containers"] is BAD or "tolerations" in p["spec"])
    starts = [i + 1 for i, text in enumerate(f.read_text().splitlines()) if text == "  {"][
        1:
    ]  # after the Node
    ends = [*starts[1:], 10**9]
    for res in (whole, streamed):  # both name the first malformed pod
        named = int(line.findall(res.stderr)[0])
        assert starts[bad] <= named < ends[bad], (named, starts)
