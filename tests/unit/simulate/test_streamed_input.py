"""A large JSON List is streamed (kubedra.simulate.inputs): the simulation is the same as reading it whole."""

from __future__ import annotations

import json

import pytest

from kubedra.errors import InputError
from kubedra.model.inventory import Inventory, add_document
from kubedra.simulate import inputs as inputs_mod
from kubedra.simulate.inputs import load_inputs
from kubedra.simulate.run import SimulateOptions, simulate
from kubedra.sources.files import parse_text
from kubedra.vendors.nvidia.cluster import cluster as nvidia_cluster


def _pod(name: str, node: str | None, gpus: int, ns: str = "ml") -> dict:
    pod: dict = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name[:3]}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "x",
                    "resources": {"requests": {"cpu": "1"}, "limits": {"nvidia.com/gpu": str(gpus)}},
                }
            ]
        },
        "status": {"phase": "Running" if node else "Pending"},
    }
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def _snapshot(tmp_path, kubectl_order: bool = False):
    objs = nvidia_cluster("3x8xH100-80GB", "full", "1.37", device_plugin=False)
    objs += [_pod(f"run-{i}", f"h100-80gb-{i % 3}", 2) for i in range(6)]
    objs += [_pod(f"new-{i}", None, 4) for i in range(5)]
    objs.append(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ml"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
                        ]
                    },
                },
            },
        }
    )
    objs.append(
        {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass", "metadata": {"name": "old"}}
    )
    doc = (
        {"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}}
        if kubectl_order
        else {"apiVersion": "v1", "kind": "List", "metadata": {}, "kubedra": {"cluster": "c"}, "items": objs}
    )
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc, indent=4 if kubectl_order else 1))
    return path


def _run(paths, stream: bool, monkeypatch, small: bool = False):
    monkeypatch.setattr(inputs_mod, "STREAM_MIN_BYTES", 0 if stream and not small else 1 << 40)
    monkeypatch.setattr(inputs_mod, "STREAM_SMALL_LISTS", small)
    inp = load_inputs([str(p) for p in paths])
    assert (inp.inventory is not None) == stream
    sim = simulate(inp, SimulateOptions())
    return inp, sim


@pytest.mark.parametrize("small", [False, True])
@pytest.mark.parametrize("kubectl_order", [False, True])
def test_streamed_snapshot_simulates_like_the_whole_file(tmp_path, monkeypatch, kubectl_order, small):
    path = _snapshot(tmp_path, kubectl_order)
    extra = tmp_path / "more.yaml"
    extra.write_text(json.dumps(_pod("yaml-0", None, 8)))
    whole_inp, whole = _run([extra, path], False, monkeypatch)
    inp, streamed = _run([extra, path], True, monkeypatch, small=small)
    assert streamed.to_dict() == whole.to_dict()
    assert streamed.notes == whole.notes
    assert simulate(inp, SimulateOptions()).to_dict() == whole.to_dict()  # the shared model is not spent
    assert [(s.what, s.reason) for s in streamed.skipped] == [(s.what, s.reason) for s in whole.skipped]
    assert any("classic DRA" in s.reason for s in streamed.skipped)
    # 3 nodes x 8 GPUs, 6 running pods hold 2 each: 4 free per node, so 3 of the 4-GPU pods fit
    assert streamed.to_dict()["modes"]["dra"]["placed"] == 3
    # the streamed documents keep only what the workload expansion reads; others (the Deployment) whole
    pod = next(d for d in inp.documents if d.name == "run-0")
    assert pod.obj == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "run-0", "namespace": "ml", "labels": {"app": "run"}},
    }
    assert next(d for d in inp.documents if d.kind == "Deployment").obj["spec"]["replicas"] == 2
    assert [d.index for d in inp.documents] == list(range(len(inp.documents)))
    assert [(d.kind, d.name) for d in inp.documents] == [(d.kind, d.name) for d in whole_inp.documents]


def test_streamed_items_keep_their_own_lines(tmp_path, monkeypatch):
    path = _snapshot(tmp_path)
    monkeypatch.setattr(inputs_mod, "STREAM_MIN_BYTES", 0)
    lines = path.read_text().splitlines()
    for d in load_inputs([str(path)]).documents:
        assert lines[d.line - 1] == "  {", d.describe()
        assert f'"name": "{d.name}"' in "\n".join(lines[d.line - 1 : d.line + 12]) or d.kind == "Node"


def test_a_malformed_streamed_object_names_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs_mod, "STREAM_MIN_BYTES", 0)
    path = tmp_path / "bad.json"
    bad = _pod("bad", "n0", 1)
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    path.write_text(
        json.dumps({"kind": "List", "apiVersion": "v1", "items": [_pod("ok", "n0", 1), bad]}, indent=1)
    )
    with pytest.raises(InputError) as e:
        load_inputs([str(path)])
    assert e.value.location is not None
    assert e.value.location.line == path.read_text().splitlines().index("  {", 5) + 1  # the second item


def test_a_json_object_that_is_not_a_list_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs_mod, "STREAM_MIN_BYTES", 0)
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(_pod("solo", None, 1)))
    inp = load_inputs([str(path)])
    assert inp.inventory is None
    assert [d.name for d in inp.documents] == ["solo"]


@pytest.mark.parametrize("indent", [None, 1, 4])
def test_a_small_streamed_list_finds_each_field_line_as_the_whole_file_does(tmp_path, monkeypatch, indent):
    path = _snapshot(tmp_path, kubectl_order=indent == 4)
    path.write_text(json.dumps(json.loads(path.read_text()), indent=indent))
    monkeypatch.setattr(inputs_mod, "STREAM_SMALL_LISTS", False)
    whole = load_inputs([str(path)])
    monkeypatch.setattr(inputs_mod, "STREAM_SMALL_LISTS", True)
    streamed = load_inputs([str(path)])
    assert whole.inventory is None
    assert streamed.inventory is not None
    assert [(d.kind, d.name, d.line) for d in streamed.documents] == [
        (d.kind, d.name, d.line) for d in whole.documents
    ]
    originals = {(d.kind, d.name): d.obj for d in parse_text(path.read_text(), str(path)).documents}
    for s, w in zip(streamed.documents, whole.documents, strict=True):
        for p in _paths(originals[(w.kind, w.name)]):  # every path of the object as written, not the slim one
            assert s.line_of(p) == w.line_of(p), (s.describe(), p)


def test_a_small_list_with_an_error_reads_as_a_whole_file_does(tmp_path, monkeypatch):
    path = tmp_path / "bad.json"
    bad = _pod("bad", "n0", 1)
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    items = [*nvidia_cluster("1x8xH100-80GB", "full", "1.37", device_plugin=False), _pod("ok", None, 1), bad]
    path.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": items}, indent=1))
    errors = []
    for small in (True, False):
        monkeypatch.setattr(inputs_mod, "STREAM_SMALL_LISTS", small)
        with pytest.raises(InputError) as e:
            simulate(load_inputs([str(path)]), SimulateOptions())
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    line = int(errors[0].split(":")[1])
    assert '"lots"' in path.read_text().splitlines()[line - 1]  # the field's own line, not the item's


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def test_a_streamed_running_pod_keeps_its_slim_mapping_as_values(tmp_path, monkeypatch):
    """Most of a cluster's documents are its running pods: each keeps the four values of its slim mapping instead
    of two dicts, and reads back the same mapping (keys in the same order) wherever it is read."""
    objs = nvidia_cluster("1x8xH100-80GB", "full", "1.37", device_plugin=False)
    gen = _pod("gen", "h100-80gb-0", 1)
    gen["metadata"] = {
        "labels": {"b": "1", "a": "2"},
        "generateName": "gen-",
        "name": "gen-x",
        "namespace": "ml",
    }
    ref = _pod("ref", "h100-80gb-0", 1)
    ref["spec"]["workloadRef"] = {"name": "w", "podGroup": "g"}
    plain = _pod("plain", "h100-80gb-0", 1)
    path = tmp_path / "snap.json"
    path.write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [*objs, gen, ref, plain]})
    )
    monkeypatch.setattr(inputs_mod, "STREAM_MIN_BYTES", 0)
    docs = {d.name: d for d in load_inputs([str(path)]).documents if d.kind == "Pod"}
    assert type(docs["gen-x"]) is inputs_mod._PodDocument
    assert list(docs["gen-x"].obj["metadata"].items()) == [
        ("name", "gen-x"),
        ("namespace", "ml"),
        ("generateName", "gen-"),
        ("labels", {"b": "1", "a": "2"}),
    ]
    assert (docs["gen-x"].kind, docs["gen-x"].api_version, docs["gen-x"].describe()) == (
        "Pod",
        "v1",
        "Pod ml/gen-x",
    )
    # a spec.workloadRef is part of the slim mapping: that document stays a plain one
    assert type(docs["ref"]) is not inputs_mod._PodDocument
    assert docs["ref"].obj["spec"] == {"workloadRef": {"name": "w", "podGroup": "g"}}
    # a mapping set in its place is the one read back
    docs["plain"].obj = {"apiVersion": "v2", "kind": "Other"}
    assert (docs["plain"].obj, docs["plain"].kind, docs["plain"].api_version) == (
        {"apiVersion": "v2", "kind": "Other"},
        "Other",
        "v2",
    )


def test_a_streamed_pod_document_is_what_its_slim_mapping_made(tmp_path):
    """_PodDocument.made (from the item) gives what _slim then _PodDocument.of gave: the same mapping, name,
    namespace and description, for each way the metadata may be written."""
    metas = [
        {"name": "a", "namespace": "ml", "labels": {"x": "1"}},
        {"name": "b"},
        {"generateName": "g-", "namespace": "ml"},
        {"name": "", "generateName": "h-", "labels": {}},
        {"labels": {"y": "2"}, "namespace": "", "name": "c", "uid": "u", "annotations": {"k": "v"}},
    ]
    for meta in metas:
        item = _pod("p", "n1", 0)
        item["metadata"] = meta
        doc = parse_text(json.dumps(item), "p.json").documents[0]
        pod = add_document(Inventory(), doc)
        made = inputs_mod._PodDocument.made(doc, pod)
        doc.obj = inputs_mod._slim(doc.obj, pod)
        of = inputs_mod._PodDocument.of(doc)
        assert made is not None
        assert type(of) is inputs_mod._PodDocument
        assert list(made.obj["metadata"].items()) == list(of.obj["metadata"].items()), meta
        assert made.obj == of.obj
        assert (made.name, made.namespace, made.describe()) == (of.name, of.namespace, of.describe())
        assert (made.name, made.namespace) == (doc.name, doc.namespace)
    item = _pod("p", "n1", 0)
    item["spec"]["workloadRef"] = {"name": "w"}
    doc = parse_text(json.dumps(item), "p.json").documents[0]
    assert inputs_mod._PodDocument.made(doc, add_document(Inventory(), doc)) is None
