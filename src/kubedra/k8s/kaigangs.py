"""The gang KAI's pod-grouper makes of a JobSet it schedules (facts in ``data/workloads.yaml`` ``kai_jobset``).

One PodGroup per JobSet: each replicatedJob needs all its replicas, each replica (a Job) needs the template's
``kai.scheduler/batch-min-member`` pods or its parallelism, and the PodGroup needs some or all of the
replicatedJobs (the JobSet's annotation, ``InOrder`` startup, or all). kubedra's gangs count pods, so "any k of
n replicatedJobs" is counted as the k smallest.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubedra.k8s import datafiles

_INT32_MAX = 2**31 - 1
_DECIMAL = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class KaiGang:
    min_count: int
    source: str
    problem: str | None = None
    held: bool = (
        False  # the pod-grouper makes no PodGroup: the pods exist and are never scheduled (problem: why)
    )


@functools.cache
def _facts() -> Mapping[str, Any]:
    data: Mapping[str, Any] = datafiles.load("workloads.yaml")["kai_jobset"]
    return data


def _get(obj: Any, *path: str) -> Any:
    for step in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(step)
    return obj


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def parse_int32(value: Any) -> int | None:
    """Go's strconv.ParseInt(value, 10, 32) on the annotation's string (None: Go's error): one optional sign,
    ASCII digits, within int32."""
    text = str(value)
    if not _DECIMAL.fullmatch(text):
        return None
    n = int(text)
    return n if -_INT32_MAX - 1 <= n <= _INT32_MAX else None


def _jobs(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    rjs = _get(obj, "spec", "replicatedJobs")
    return [rj for rj in rjs if isinstance(rj, Mapping)] if isinstance(rjs, list) else []


def under_kai(obj: Mapping[str, Any]) -> bool:
    """Whether KAI groups the JobSet: its pods name KAI's scheduler, or it carries KAI's min-member annotation."""
    f = _facts()
    key = f["min_member"]
    if key in (_get(obj, "metadata", "annotations") or {}):
        return True
    for rj in _jobs(obj):
        if key in (_get(rj, "template", "metadata", "annotations") or {}):
            return True
        if _get(rj, "template", "spec", "template", "spec", "schedulerName") == f["scheduler_name"]:
            return True
    return False


def jobset_gang(obj: Mapping[str, Any]) -> KaiGang | None:
    """KAI's gang for JobSet ``obj`` (None: not under KAI, or a gang of one pod)."""
    if not under_kai(obj):
        return None
    key = _facts()["min_member"]
    rjs = _jobs(obj)
    needs: list[int] = []
    for rj in rjs:
        parallelism = _int(_get(rj, "template", "spec", "parallelism"), 1)
        raw = (_get(rj, "template", "metadata", "annotations") or {}).get(key)
        leaf = parallelism
        if raw is not None:
            n = parse_int32(raw)
            if n is None or n < 1:
                return _refused(
                    f"replicatedJob {rj.get('name')!r} template annotation {key}: {str(raw)[:40]!r}"
                )
            if n > parallelism:
                return KaiGang(
                    n,
                    f"annotation {key} (KAI pod-grouper)",
                    problem=f"replicatedJob {rj.get('name')!r} asks {key}: {n} of a Job of parallelism "
                    f"{parallelism}: KAI applies it, and the replica's {parallelism} pods never make {n}",
                )
            leaf = n
        needs.append(_int(rj.get("replicas"), 1) * leaf)
    if not needs:
        return None
    raw = (_get(obj, "metadata", "annotations") or {}).get(key)
    if raw is not None:
        n = parse_int32(raw)
        if n is None or n < 1:
            return _refused(f"JobSet annotation {key}: {str(raw)[:40]!r}")
        k, why = min(n, len(needs)), f"annotation {key}"
    elif _get(obj, "spec", "startupPolicy", "startupPolicyOrder") == "InOrder":
        # the JobSet controller creates one replicatedJob at a time: the first one is the gang
        return _gang(needs[0], "first replicatedJob (startupPolicyOrder InOrder: KAI MinSubGroup 1)")
    else:
        k, why = len(needs), "every replicatedJob"
    if k == len(needs):
        return _gang(sum(needs), f"{why}: replicas x min-member or parallelism (KAI pod-grouper)")
    return _gang(
        sum(sorted(needs)[:k]),
        f"{why}: any {k} of {len(needs)} replicatedJobs, counted as the {k} smallest (KAI pod-grouper)",
    )


def _gang(n: int, source: str) -> KaiGang | None:
    return KaiGang(n, source) if n > 1 else None


def _refused(what: str) -> KaiGang:
    return KaiGang(
        1,
        "KAI pod-grouper",
        problem=f"{what} is not a whole number of at least 1: KAI's pod-grouper refuses it and makes no "
        "PodGroup, so the pods are never scheduled",
        held=True,
    )
