"""core/v1 NodeSelector matching, as ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` does it.

Terms are ORed; inside a term, every matchExpression (labels) and matchField (only ``metadata.name``) must
hold. A term without requirements matches nothing. Invalid requirements (unknown operator, Gt/Lt without a
single integer, a field other than metadata.name) raise :class:`NodeSelectorError`, which callers turn into
an error like upstream's "failed to parse node selector".
"""

from __future__ import annotations

from collections.abc import Mapping

from kubedra.model.objects import NodeSelector, NodeSelectorRequirement


class NodeSelectorError(ValueError):
    pass


def _label_matches(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    op = req.operator
    has = req.key in labels
    if op == "In":
        if not req.values:
            raise NodeSelectorError(f"{req.key}: values must be non-empty for operator In")
        return has and labels[req.key] in req.values
    if op == "NotIn":
        if not req.values:
            raise NodeSelectorError(f"{req.key}: values must be non-empty for operator NotIn")
        return not has or labels[req.key] not in req.values
    if op == "Exists":
        if req.values:
            raise NodeSelectorError(f"{req.key}: values must be empty for operator Exists")
        return has
    if op == "DoesNotExist":
        if req.values:
            raise NodeSelectorError(f"{req.key}: values must be empty for operator DoesNotExist")
        return not has
    if op in ("Gt", "Lt"):
        if len(req.values) != 1:
            raise NodeSelectorError(f"{req.key}: exactly one value required for operator {op}")
        try:
            want = int(req.values[0])
        except ValueError:
            raise NodeSelectorError(
                f"{req.key}: value {req.values[0]!r} for {op} must be an integer"
            ) from None
        if not has:
            return False
        try:
            have = int(labels[req.key])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    raise NodeSelectorError(f"{req.key}: {op!r} is not a valid node selector operator")


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
