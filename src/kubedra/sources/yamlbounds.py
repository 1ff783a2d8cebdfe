"""Bounds on what one YAML document may expand to, checked on the composed node graph before anything walks it.

A YAML alias is a reference: PyYAML composes ``*a`` as the very node object of ``&a``, so a 500-byte file of
nested anchors is a small graph that becomes gigabytes once converted or walked. kubectl reads manifests with
go-yaml v2 (through sigs.k8s.io/yaml), which refuses a document with "excessive aliasing": while decoding it
counts every node it decodes (``decodeCount``) and every node decoded inside an alias expansion
(``aliasCount``) and fails when ``aliasCount > 100 && decodeCount > 1000 && aliasCount/decodeCount >
allowedAliasRatio(decodeCount)`` (gopkg.in/yaml.v2 v2.4.0 decode.go; the same in yaml.v3). This module
computes the same two counts without expanding anything (each node's expanded size is computed once), so a
bomb is refused in milliseconds, with go-yaml's own verdict.

Beyond go-yaml, kubedra bounds what its own Python code can hold and walk: the expanded node count of a
document (``MAX_DOCUMENT_NODES``) and its nesting depth (``MAX_DEPTH``). A recursive alias (an anchor used
inside itself, which go-yaml refuses too) is an error rather than a cycle.
"""

from __future__ import annotations

import yaml

# gopkg.in/yaml.v2 v2.4.0 decode.go (alias_ratio_range_low/high)
ALIAS_RATIO_RANGE_LOW = 400_000
ALIAS_RATIO_RANGE_HIGH = 4_000_000
# kubedra's own bounds (not kubectl's): a real Kubernetes object is far below both; kind: List dumps of
# thousands of objects stay below the node bound.
MAX_DOCUMENT_NODES = 4_000_000
MAX_DEPTH = 200


def allowed_alias_ratio(decode_count: int) -> float:
    """go-yaml's allowedAliasRatio: 99% for small documents, scaling down to 10% for very large ones."""
    if decode_count <= ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decode_count >= ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    span = float(ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW)
    return 0.99 - 0.89 * (float(decode_count - ALIAS_RATIO_RANGE_LOW) / span)


def _excessive(alias_count: int, decode_count: int) -> bool:
    return (
        alias_count > 100
        and decode_count > 1000
        and alias_count / decode_count > allowed_alias_ratio(decode_count)
    )


class BoundsError(ValueError):
    """The document is refused; ``node`` is where the problem was found (for a line number)."""

    def __init__(self, message: str, node: yaml.Node) -> None:
        super().__init__(message)
        self.node = node


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_node(root: yaml.Node) -> int:
    """Raise :class:`BoundsError` when the document ``root`` breaks a bound; return its expanded node count.

    The walk follows document order, as go-yaml's decoder does: the first time a node object is reached it
    is its definition (counted once); every later time it is an alias, which counts one node for the alias
    itself plus the whole expanded size of its target, all of it "inside an alias". Inside an expansion the
    alias ratio only grows and the allowed ratio only shrinks, so checking after each expansion gives exactly
    go-yaml's verdict."""
    expanded: dict[int, int] = {}  # id(node) -> expanded size (go-yaml decode operations)
    open_nodes: set[int] = set()
    decode = 0
    aliased = 0
    # iterative DFS: (node, depth, children iterator or None, running size)
    stack: list[list[object]] = []

    def enter(node: yaml.Node, depth: int) -> int | None:
        """Count ``node``; return its size when it is a leaf or an alias (nothing to descend into)."""
        nonlocal decode, aliased
        key = id(node)
        if key in expanded:  # an alias of a complete node
            size = expanded[key]
            decode += 1 + size
            aliased += size
            if _excessive(aliased, decode):
                raise BoundsError("document contains excessive aliasing (refused like kubectl)", node)
            if decode > MAX_DOCUMENT_NODES:
                raise BoundsError(f"document expands to more than {MAX_DOCUMENT_NODES} nodes", node)
            return 1 + size
        if key in open_nodes:
            raise BoundsError("anchor value contains itself (recursive alias)", node)
        decode += 1
        if decode > MAX_DOCUMENT_NODES:
            raise BoundsError(f"document expands to more than {MAX_DOCUMENT_NODES} nodes", node)
        if depth > MAX_DEPTH:
            raise BoundsError(f"nesting deeper than {MAX_DEPTH} levels", node)
        kids = _children(node)
        if not kids:
            expanded[key] = 1
            return 1
        open_nodes.add(key)
        stack.append([node, depth, iter(kids), 1])
        return None

    enter(root, 1)
    while stack:
        frame = stack[-1]
        node, depth, kids, size = frame
        child = next(kids, None)  # type: ignore[call-overload]
        if child is None:
            stack.pop()
            expanded[id(node)] = size  # type: ignore[assignment]
            open_nodes.discard(id(node))
            if stack:
                stack[-1][3] += size  # type: ignore[operator]
            continue
        got = enter(child, depth + 1)  # type: ignore[operator]
        if got is not None:
            frame[3] += got  # type: ignore[operator]
    return decode


def check_depth(obj: object) -> None:
    """ValueError when plain data (parsed JSON) nests deeper than ``MAX_DEPTH``."""
    stack: list[tuple[object, int]] = [(obj, 1)]
    while stack:
        cur, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(cur, dict):
            stack.extend((v, depth + 1) for v in cur.values())
        elif isinstance(cur, list):
            stack.extend((v, depth + 1) for v in cur)
