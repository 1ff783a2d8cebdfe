"""The fields kube-apiserver clears from a new DRA object while their feature gate is off, before it validates it
(``data/dropped-fields.yaml``, with the upstream source): validate warns that such a field is dropped and checks
the object as the apiserver stores it, without the field."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubedra.k8s.featuregates import dropped_fields, gate_info
from kubedra.k8s.versions import Version
from kubedra.validate.rules import Issue, Path

# Where a ResourceClaim spec sits in each kind that holds one (``claimSpec`` in the data file).
_CLAIM_SPEC = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}


def _paths(entry: Mapping[str, Any], kind: str) -> list[tuple[tuple[str, ...], str]]:
    """(prefix, pattern) pairs of ``entry`` for ``kind``."""
    out: list[tuple[tuple[str, ...], str]] = [((), p) for p in entry.get(kind) or ()]
    if kind in _CLAIM_SPEC:
        out += [(_CLAIM_SPEC[kind], p) for p in entry.get("claimSpec") or ()]
    return out


def _off(gates: list[str], release: Version) -> str | None:
    """The first of ``gates`` off by default at ``release`` (with its stage), or None when every one is on. A
    gate the release does not list (gone after GA) is on."""
    for gate in gates:
        info = gate_info(gate, release)  # data/feature-gates.yaml
        if info is not None and not info.get("default"):
            return f"{gate} is {info.get('stage', 'alpha')} and off by default in {release}"
    return None


def _found(node: Any, steps: list[str], at: Path) -> Iterator[tuple[Any, str, Path]]:
    """(parent mapping, key, path of the value) for every value ``steps`` reaches in ``node``."""
    step, rest = steps[0], steps[1:]
    if not isinstance(node, Mapping):
        return
    keys: list[str] = list(node) if step == "*" else [step.removesuffix("[]")]
    for key in keys:
        if key not in node:
            continue
        if not rest:
            yield node, key, (*at, key)
        elif step.endswith("[]"):
            items = node[key]
            for i, item in enumerate(items if isinstance(items, list) else ()):
                yield from _found(item, rest, (*at, key, i))
        else:
            yield from _found(node[key], rest, (*at, key))


@dataclass
class Dropped:
    """An object as the apiserver validates it: ``obj`` with the gated fields cleared (the object itself when
    nothing was), a warning per field pattern that held a value, and the paths cleared."""

    obj: Mapping[str, Any]
    warnings: list[Issue] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)

    def holds(self, path: Path) -> bool:
        """Whether ``path`` lies in a cleared field."""
        return any(path[: len(p)] == p for p in self.paths)


def drop_disabled(obj: Mapping[str, Any], release: Version) -> Dropped:
    """``obj`` as the apiserver of ``release`` (default gates) validates a new one."""
    kind = str(obj.get("kind", ""))
    checked: Any = obj
    issues: list[Issue] = []
    paths: list[Path] = []
    for entry in dropped_fields():
        if release < Version.parse(entry["from"]):
            continue
        patterns = _paths(entry, kind)
        why = _off(entry["gates"], release) if patterns else None
        if why is None:
            continue
        for prefix, pattern in patterns:
            hits = [h for h in _found(checked, [*prefix, *pattern.split(".")], ()) if h[0][h[1]] is not None]
            if not hits:
                continue
            if checked is obj:  # copy once, then find the same places again in the copy
                checked = copy.deepcopy(dict(obj))
                hits = [
                    h for h in _found(checked, [*prefix, *pattern.split(".")], ()) if h[0][h[1]] is not None
                ]
            more = f" ({len(hits)} places)" if len(hits) > 1 else ""
            name = ".".join([*prefix, pattern])
            issues.append(
                Issue(
                    hits[0][2],
                    f"{why}: the apiserver drops {name}{more} unless the feature gate is enabled",
                    True,
                )
            )
            for parent, key, at in hits:
                del parent[key]
                paths.append(at)
    return Dropped(checked, issues, paths)
