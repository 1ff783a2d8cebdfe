"""Whether a toleration tolerates a taint: the one implementation, for both APIs.

core/v1 ``Toleration``/``Taint`` (``k8s.io/api/core/v1/toleration.go`` ``ToleratesTaint``) and
resource.k8s.io ``DeviceToleration``/``DeviceTaint`` (``k8s.io/dynamic-resource-allocation/resourceclaim``
``ToleratesTaint``, "copied from" the core/v1 one) decide the same way: an empty ``effect`` matches every
effect, else the effects must be equal; an empty ``key`` matches every key (validation then requires operator
``Exists``), else the keys must be equal; operator ``Exists`` matches any value, ``Equal`` or empty (the
unset operator of a pod toleration) needs equal values; any other operator matches nothing.

core/v1 also knows ``Lt``/``Gt`` behind the alpha gate ``TaintTolerationComparisonOperators`` (1.35, off by
default; ``component-helpers`` ``ToleratesTaint(..., enableComparisonOperators)``): with the gate off, which
is the only state modelled here, such a toleration matches nothing, as upstream.

Which taints a toleration must cover is the caller's: the scheduler's TaintToleration filter and the DRA
allocator only look at ``NoSchedule`` and ``NoExecute`` (:data:`BLOCKING_EFFECTS`); a device taint's ``None``
effect and unknown effects are ignored (``resourceclaim.ToleratesTaint``: "Unknown effects and the None effect
must be ignored").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


class TaintLike(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def effect(self) -> str: ...


class TolerationLike(TaintLike, Protocol):
    @property
    def operator(self) -> str: ...


T = TypeVar("T", bound=TaintLike)


def tolerates(toleration: TolerationLike, taint: TaintLike) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def untolerated(
    taints: Iterable[T], tolerations: Iterable[TolerationLike], effects: Iterable[str] = BLOCKING_EFFECTS
) -> T | None:
    """The first taint with one of ``effects`` that no toleration tolerates (``FindMatchingUntoleratedTaint``)."""
    tols = list(tolerations)
    wanted = tuple(effects)
    for t in taints:
        if t.effect in wanted and not any(tolerates(x, t) for x in tols):
            return t
    return None
