"""core/v1 NodeSelector matching, as ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` does it.

Terms are ORed; inside a term, every matchExpression (labels) and matchField (only ``metadata.name``) must
hold. A term without requirements matches nothing. Invalid requirements (unknown operator, Gt/Lt without a
single integer, a field other than metadata.name) raise :class:`NodeSelectorError`, which callers turn into
an error like upstream's "failed to parse node selector". Label requirements are
:mod:`kubedra.model.labelselector`'s, with Gt and Lt allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubedra.model.labelselector import NODE_OPERATORS, SelectorError, requirement
from kubedra.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm


class NodeSelectorError(SelectorError):
    pass


def _label_matches(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    try:
        r = requirement(req.key, req.operator, req.values, operators=NODE_OPERATORS)
    except SelectorError as e:
        raise NodeSelectorError(str(e), e.path) from None
    return r.matches(labels)


def _field_matches(req: NodeSelectorRequirement, node_name: str) -> bool:
    if req.key != "metadata.name":
        raise NodeSelectorError(f"{req.key!r} is not a valid field selector (only metadata.name)")
    if len(req.values) != 1:
        raise NodeSelectorError(f"unexpected number of value ({len(req.values)}) for node field selector")
    if req.operator == "In":
        return node_name == req.values[0]
    if req.operator == "NotIn":
        return node_name != req.values[0]
    raise NodeSelectorError(f"{req.operator!r} is not a valid node field selector operator")


def check_node_selector(selector: NodeSelector) -> None:
    """:class:`NodeSelectorError` when a requirement is invalid (the apiserver refuses the pod spec)."""
    for term in selector.terms:
        for r in term.match_expressions:
            _label_matches(r, {})
        for r in term.match_fields:
            _field_matches(r, "")


def node_selector_matches(selector: NodeSelector, node_name: str, labels: Mapping[str, str]) -> bool:
    """True if any term matches the node. Every term is validated first, like NewNodeSelector."""
    matched = False
    for term in selector.terms:
        if not term.match_expressions and not term.match_fields:
            continue
        ok = True
        for r in term.match_expressions:
            if not _label_matches(r, labels):
                ok = False
        for r in term.match_fields:
            if not _field_matches(r, node_name):
                ok = False
        if ok:
            matched = True
    return matched


def required_node_selector(affinity: Any) -> NodeSelector | None:
    """A pod spec's ``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``, or None."""
    na = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(na, Mapping) else None
    terms = req.get("nodeSelectorTerms") if isinstance(req, Mapping) else None
    if not isinstance(terms, list):
        return None

    def reqs(items: Any) -> list[NodeSelectorRequirement]:
        return [
            NodeSelectorRequirement(
                str(r.get("key", "")), str(r.get("operator", "")), [str(v) for v in r.get("values") or []]
            )
            for r in (items if isinstance(items, list) else [])
            if isinstance(r, Mapping)
        ]

    return NodeSelector(
        terms=[
            NodeSelectorTerm(
                match_expressions=reqs(t.get("matchExpressions")), match_fields=reqs(t.get("matchFields"))
            )
            for t in terms
            if isinstance(t, Mapping)
        ]
    )
