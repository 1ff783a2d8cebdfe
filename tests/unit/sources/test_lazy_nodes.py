"""keep_nodes="lazy" keeps only where each document is and composes its node tree again when a line is asked
for: every Document must come out with the same line, and line_of must give the same line for every path,
as with the node trees kept."""

from __future__ import annotations

import pytest
from tests.unit.sources.paths import all_paths

from kubedra.sources.files import LazyNode, parse_text

MULTI = """\
# leading comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
data:
  k: v
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p1}
  spec:
    containers:
    - name: c
      image: x
- apiVersion: v1
  kind: List
  items:
  - apiVersion: v1
    kind: Pod
    metadata:
      name: nested
---
    apiVersion: v1
    kind: Service
    metadata:
      name: indented
    spec:
      ports:
      - port: 80
--- {apiVersion: v1, kind: Namespace, metadata: {name: flow}}
---
apiVersion: v1
kind: Secret
metadata: &m
  name: anchored
stringData: {a: b}
"""

JSON = """{
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "j1"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j2"}}
  ]
}
"""


@pytest.mark.parametrize(("text", "name"), [(MULTI, "multi.yaml"), (JSON, "list.json")])
def test_lazy_gives_the_same_lines_as_kept_nodes(text: str, name: str) -> None:
    eager = parse_text(text, name)
    lazy = parse_text(text, name, keep_nodes="lazy")
    assert not eager.errors
    assert not lazy.errors
    assert [(d.obj, d.line) for d in lazy.documents] == [(d.obj, d.line) for d in eager.documents]
    assert all(isinstance(d.node_source, LazyNode) for d in lazy.documents)
    checked = 0
    for e, z in zip(eager.documents, lazy.documents, strict=True):
        for path in [*all_paths(e.obj), ("spec", "absent"), ("metadata", "name", "deeper")]:
            assert z.line_of(path) == e.line_of(path), (e.describe(), path)
            checked += 1
    assert checked > 10
    # distinct lines really come back (not just the document's first line)
    if name == "multi.yaml":
        svc = next(d for d in lazy.documents if d.name == "indented")
        assert svc.line_of(["spec", "ports", 0, "port"]) == MULTI.splitlines().index("      - port: 80") + 1


def test_without_nodes_line_of_is_the_document_line() -> None:
    docs = parse_text(MULTI, "multi.yaml", keep_nodes=False).documents
    assert all(d.node_source is None and d.line_of(["metadata", "name"]) == d.line for d in docs)
