"""Which real-world files the live agreement suite (tests/integration/e2e/test_realworld_live.py) runs on the
testbed's 1.37 control plane, and why the others cannot run there.

A file runs when kube-controller-manager creates all of its pods and kube-scheduler places them: its workloads
are Pods, Deployments, ReplicaSets, ReplicationControllers, StatefulSets, DaemonSets or Jobs. The reasons a
file cannot run are computed from its text (so this list cannot go stale); :data:`KNOWN` holds the files
that run but whose outcome differs for a reason outside kubedra, each checked by the live suite (strict: a
listed file that agrees fails there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubedra.k8s.workloads import api_group
from kubedra.model.lifecycle import DeprecationDB
from kubedra.validate.schema import BUILTIN_GROUPS

MODES = ("device-plugin", "dra")

# (group, kind) whose pods kube-controller-manager creates (or, for Pod, the object itself)
WORKLOADS = {
    ("", "Pod"),
    ("", "ReplicationController"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("extensions", "Deployment"),
    ("extensions", "ReplicaSet"),
    ("extensions", "DaemonSet"),
    ("batch", "Job"),
}
DEFAULT_SCHEDULERS = ("", "default-scheduler")
KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"

# file -> mode -> why kube-scheduler's outcome differs from simulate's for a reason outside kubedra.
_NO_PVC = (
    "its pod mounts the PersistentVolumeClaim YOUR-PVC-NAME, which the file does not create: kube-scheduler's "
    "VolumeBinding plugin keeps the pod pending; simulate does not model volumes and places it"
)
KNOWN: dict[str, dict[str, str]] = {
    "vllm-stack--pd-decode-deploy.yaml": {"device-plugin": _NO_PVC, "dra": _NO_PVC},
}

_DB = DeprecationDB.load()


def documents(path: Path) -> list[dict[str, Any]] | None:
    """The file's objects, or None when it is not YAML as it stands (a Helm template)."""
    try:
        return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind")]
    except yaml.YAMLError:
        return None


def group_kind(doc: dict[str, Any]) -> tuple[str, str]:
    return api_group(str(doc.get("apiVersion", ""))), str(doc.get("kind", ""))


def _kubernetes_owned(doc: dict[str, Any]) -> bool:
    group, kind = group_kind(doc)
    return group in BUILTIN_GROUPS or bool(_DB.versions_of(group, kind))  # removed groups too (extensions)


def pod_specs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc.get("spec") or {}
    if group_kind(doc) == ("", "Pod"):
        return [spec]
    template = (spec.get("template") or {}).get("spec")
    return [template] if isinstance(template, dict) else []


def why_not_live(path: Path) -> str | None:
    """Why ``path`` cannot run on the testbed as it stands; None when it runs."""
    docs = documents(path)
    if docs is None:
        return "not YAML as it stands (a Helm template: render it first)"
    custom = sorted({f"{d.get('apiVersion')} {d.get('kind')}" for d in docs if not _kubernetes_owned(d)})
    if custom:
        return f"custom resources ({', '.join(custom)}): their CRDs and operators are not on the testbed"
    workloads = [d for d in docs if group_kind(d) in WORKLOADS]
    if not workloads:
        if any(group_kind(d) == ("batch", "CronJob") for d in docs):
            return "a CronJob creates its Job on its schedule, not when it is created"
        return "no workload whose pods kube-controller-manager creates"
    schedulers = sorted(
        {str(s.get("schedulerName") or "") for d in workloads for s in pod_specs(d)} - set(DEFAULT_SCHEDULERS)
    )
    if schedulers:
        return f"pods for scheduler {', '.join(schedulers)}, which the testbed does not run"
    queued = [d for d in workloads if KUEUE_QUEUE in ((d.get("metadata") or {}).get("labels") or {})]
    if queued:
        return f"queued in Kueue ({KUEUE_QUEUE}): Kueue, not on the testbed, admits it"
    return None


def why_not_in_mode(path: Path, mode: str) -> str | None:
    """Why ``path`` runs in one mode only: a file that already uses DRA has nothing to place on device-plugin
    nodes (they publish no ResourceSlices); simulate's device-plugin column shows such a claim as the
    ``nvidia.com/gpu`` it replaced, a counterfactual no cluster runs."""
    if mode != "device-plugin":
        return None
    docs = documents(path) or []
    if any(group_kind(d)[0] == "resource.k8s.io" for d in docs) or any(
        s.get("resourceClaims") for d in docs for s in pod_specs(d)
    ):
        return "uses DRA already: device-plugin nodes publish no ResourceSlices to place it on"
    return None


def agreement(path: Path) -> dict[str, str]:
    """What the live suite says about ``path``, for its expected outcome: per mode, ``kube-scheduler agrees``,
    the known difference, or why it cannot run."""
    why = why_not_live(path)
    if why is not None:
        return {"notRun": why}
    known = KNOWN.get(path.name, {})
    return {mode: why_not_in_mode(path, mode) or known.get(mode, "kube-scheduler agrees") for mode in MODES}
