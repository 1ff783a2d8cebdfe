"""Shrink a scenario on which kubedra and the oracle disagree to a small one that still disagrees the same
way, by deleting parts of the JSON document (greedy, to a fixpoint), and write it as a corpus case.

Each round builds every one-step reduction (drop a claim, request, subrequest, constraint, config, slice,
device, attribute, capacity, taint, selector, toleration, allocated device, taint rule, counter
consumption; switch a feature off) and sends them to the oracle in one batch; the first candidate that
still disagrees with the same *signature* (outcome kinds, and which part of the allocation differs)
becomes the new scenario.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from kubedra.testing.oracle import Oracle, OracleError

from .compare import (
    Outcome,
    difference,
    kubedra_outcome,
    oracle_outcome,
    oracle_release,
    ordered,
    stable_order_explains,
)
from .scenarios import KUBEDRA_FEATURES

Doc = dict[str, Any]

# Lists whose elements may be dropped one at a time, by key, wherever they occur in the document.
_LISTS = {
    "claims",
    "slices",
    "classes",
    "requests",
    "firstAvailable",
    "constraints",
    "config",
    "devices",
    "selectors",
    "tolerations",
    "taints",
    "allocatedDevices",
    "allocatedSharedDeviceIDs",
    "deviceTaintRules",
    "consumesCounters",
    "sharedCounters",
    "bindingConditions",
    "bindingFailureConditions",
}
# ... but not the last one of these (the API requires at least one: a request needs a body, a counter set
# a counter; upstream's allocator may even panic on such input).
_NON_EMPTY = {"requests", "firstAvailable", "counters", "sharedCounters"}
# Mapping entries that may be dropped one at a time.
_MAPS = {"attributes", "capacity", "allocatedCapacity", "counters", "labels", "requests"}
# Optional fields that may be dropped.
_OPTIONAL = {
    "adminAccess",
    "requestPolicy",
    "capacity",
    "selectors",
    "tolerations",
    "constraints",
    "config",
    "bindsToNode",
    "deviceTaintRules",
}


def signature(ours: Outcome, theirs: Outcome, exact: bool) -> str | None:
    why = difference(ours, theirs, exact)
    if why is None:
        return None
    if ours["kind"] != theirs["kind"]:
        return f"{ours['kind']}/{theirs['kind']}"
    return why.split(":", 1)[0].split(" ", 2)[-1]  # "devices", "nodeSelector", "config", "requests"


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


def _get(doc: Doc, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def reductions(doc: Doc) -> Iterator[Doc]:
    """Every document one deletion smaller, biggest cuts first."""
    # switching features off
    for name in KUBEDRA_FEATURES:
        if doc["features"].get(name):
            out = copy.deepcopy(doc)
            out["features"][name] = False
            yield out
    found: list[tuple[int, tuple[Any, ...], str]] = []
    for path, node in _paths(doc):
        if not path:
            continue
        key = path[-1]
        if isinstance(node, list) and key in _LISTS and len(node) > (1 if key in _NON_EMPTY else 0):
            found.extend((len(path), (*path, i), "item") for i in range(len(node)))
        if isinstance(node, dict) and key in _MAPS and len(node) > (1 if key in _NON_EMPTY else 0):
            found.extend((len(path), (*path, k), "entry") for k in node)
        if key in _OPTIONAL:
            found.append((len(path), path, "field"))
    found.sort(key=lambda f: f[0])
    seen: set[tuple[Any, ...]] = set()
    for _, path, _kind in found:
        if path in seen:
            continue
        seen.add(path)
        out = copy.deepcopy(doc)
        parent = _get(out, path[:-1])
        try:
            del parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue
        yield out


def _answers(oracle: Oracle, docs: list[Doc]) -> list[dict[str, Any] | None]:
    """The oracle's answers, None for a candidate it cannot take (one bad document fails a whole batch)."""
    try:
        return list(oracle.run_batch(docs))
    except OracleError:
        out: list[dict[str, Any] | None] = []
        for d in docs:
            try:
                out.append(oracle.run(d))
            except OracleError:
                out.append(None)
        return out


def minimize(
    doc: Doc,
    oracle: Oracle,
    *,
    max_rounds: int = 200,
    log: Callable[[str], None] | None = None,
    release: str = "1.37",
) -> tuple[Doc, Outcome, Outcome]:
    """The smallest document found that disagrees like ``doc``; with both outcomes for it. ``oracle`` is the
    one of ``release``; kubedra allocates at its exact patch (``compare.oracle_release``)."""
    patch = oracle_release(release)
    exact = ordered(doc["features"], release)
    ours, theirs = kubedra_outcome(doc, version=patch), oracle_outcome(oracle.run(doc))
    want = signature(ours, theirs, exact)
    if want is None or (not exact and stable_order_explains(doc, ours, oracle)):
        raise ValueError("the scenario does not disagree")
    for _ in range(max_rounds):
        candidates = list(reductions(doc))
        if not candidates:
            break
        results = _answers(oracle, candidates)
        for cand, res in zip(candidates, results, strict=True):
            if res is None:
                continue
            c_exact = ordered(cand["features"], release)
            if c_exact != exact:
                continue
            c_ours = kubedra_outcome(cand, version=patch)
            c_theirs = oracle_outcome(res)
            if signature(c_ours, c_theirs, exact) == want and (
                exact or not stable_order_explains(cand, c_ours, oracle)
            ):
                doc, ours, theirs = cand, c_ours, c_theirs
                break
        else:
            break
    if log:
        log(f"minimized to {len(str(doc))} characters")
    return doc, ours, theirs
