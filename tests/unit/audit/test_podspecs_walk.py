"""find_pod_specs walks objects recursively with one path list (made a tuple only for a hit); it must find
exactly what the earlier walk (a stack of (path, node, parent) tuples, kept here as the reference) found, in the
same order, with the same paths, specs and metadata, on the corpora and on generated objects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.audit.podspecs import (
    _COLLECTIONS,
    _MAX_DEPTH,
    _SKIP_KEYS,
    PodSpecAt,
    _is_pod_spec,
    find_pod_specs,
)
from kubedra.sources.files import load

ROOT = Path(__file__).resolve().parents[3]


def reference(obj: dict[str, Any]) -> Iterator[PodSpecAt]:
    """The walk before this one, unchanged."""
    if obj.get("kind") == "Pod":
        spec = obj.get("spec")
        if isinstance(spec, dict) and _is_pod_spec(spec):
            meta = obj.get("metadata")
            yield PodSpecAt(("spec",), spec, ("metadata",), meta if isinstance(meta, dict) else {})
        return
    stack: list[tuple[tuple[str | int, ...], Any, dict[str, Any] | None]] = [((), obj, None)]
    while stack:
        path, node, parent = stack.pop()
        if len(path) > _MAX_DEPTH:
            continue
        if isinstance(node, dict):
            if path and _is_pod_spec(node):
                meta = parent.get("metadata") if parent is not None else None
                yield PodSpecAt(path, node, (*path[:-1], "metadata"), meta if isinstance(meta, dict) else {})
                continue
            for k, v in reversed(node.items()):
                if isinstance(v, _COLLECTIONS) and k not in _SKIP_KEYS:
                    stack.append(((*path, k), v, node))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                v = node[i]
                if isinstance(v, _COLLECTIONS):
                    stack.append(((*path, i), v, None))


def _same(obj: dict[str, Any]) -> int:
    found = list(find_pod_specs(obj))
    assert found == list(reference(obj))
    assert all(a.spec is b.spec and a.meta == b.meta for a, b in zip(found, reference(obj), strict=True))
    return len(found)


def test_corpora_find_the_same_pod_specs() -> None:
    folders = [ROOT / "tests" / "corpus", ROOT / "tests" / "realworld"]
    docs = load([str(f) for f in folders], strict=False, keep_nodes=False).documents
    assert len(docs) > 100
    assert sum(_same(d.obj) for d in docs) > 50


_KEYS = ["spec", "template", "metadata", "containers", "data", "workers", "items", "x"]
_LEAF = st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["a", "b"]))
_TREE = st.recursive(
    _LEAF,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3),
        st.dictionaries(st.sampled_from(_KEYS), kids, max_size=4),
        st.builds(
            lambda c, m: {"containers": c, "metadata": m}, st.lists(st.just({"name": "c"}), max_size=2), kids
        ),
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(st.sampled_from(_KEYS), _TREE, max_size=4), st.sampled_from(["Pod", "Deployment", None])
)
def test_generated_objects_find_the_same_pod_specs(obj: dict[str, Any], kind: str | None) -> None:
    if kind is not None:
        obj = {"kind": kind, **obj}
    _same(obj)


def test_deep_objects_stop_at_the_same_depth() -> None:
    """Pod specs nested around the depth bound: found above it, not below it, as before."""
    pod = {"containers": [{"name": "c"}]}
    counts = set()
    for depth in range(4, 16):
        for shift in (0, 1):  # the pod spec in a list, or in a mapping
            obj: dict[str, Any] = pod
            for i in range(depth):
                obj = {"x": obj} if (i + shift) % 2 else {"x": [obj]}
            counts.add(_same(obj))
    assert counts == {0, 1}
