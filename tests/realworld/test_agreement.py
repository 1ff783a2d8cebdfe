"""audit, migrate and simulate agree on which objects of each real-world file use GPUs outside DRA.

- audit: objects with a GPU-request finding (device plugin, MIG, HAMi, other vendors, sharing annotations, GPUs in a
  custom resource's fields);
- migrate: objects it rewrites or leaves as manual items at a field (a GPU request, annotation or CR field);
- simulate: workloads whose pods request such a GPU, and objects it skips because of one.

DRA claims are not "GPUs outside DRA": pods that only use resourceClaims are in none of the three sets.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubedra import vendors
from kubedra.audit.checks.gpu import CUSTOM_RESOURCE_RULE, REQUEST_RULES
from kubedra.k8s.gpuschemes import annotation_schemes, resource_scheme
from kubedra.k8s.workloads import custom_resource_gpu_fields, get_path, pod_templates
from kubedra.model.objects import Pod
from kubedra.scheduler.workloads import expand
from kubedra.simulate.inputs import load_inputs
from kubedra.vendors import classify  # every vendor behind the seam
from realworld import outcomes

GPU_RULES = {*REQUEST_RULES, CUSTOM_RESOURCE_RULE}
# Files where a verb is known to disagree, with the issue item that owns the fix (strict: fixing it fails here).
KNOWN: dict[str, str] = {}


def _ref(kind: str, name: str) -> str:
    return f"{kind}/{name.rstrip('-')}"  # generateName objects: the prefix names them everywhere


def audit_gpu_objects(path: Path) -> set[str]:
    _, data, _ = outcomes._run(["audit", "-o", "json", str(path)])
    return {
        _ref(f["object"]["kind"], f["object"]["name"]) for f in data["findings"] if f["rule"] in GPU_RULES
    }


def migrate_gpu_objects(path: Path) -> set[str]:
    _, data, _ = outcomes._run(["migrate", "-o", "json", str(path)])
    out = set()
    for f in data["files"]:
        for x in f["findings"]:
            where = x.get("path") or ""
            if x["level"] not in ("change", "manual") or not x.get("object") or not where:
                continue
            if (
                where == "apiVersion"
                or where.startswith(("data", "metadata.namespace"))
                or "rayStartParams" in where
                or x["message"].startswith("migrated output does not validate")
            ):
                continue  # DRA version conversion, device-plugin configs, invalid output, Ray's own GPU count
            out.add(_ref(x["object"]["kind"], x["object"]["name"]))
    return out


def _outside_dra(pod: Pod) -> bool:
    names = [n for c in [*pod.init_containers, *pod.containers] for n in (*c.requests, *c.limits)]
    return any(classify(n) is not None or resource_scheme(n) is not None for n in names) or bool(
        annotation_schemes(pod.meta.annotations)
    )


def _template_gpus(obj: dict) -> bool:
    """A pod template of ``obj`` asks for a GPU outside DRA (an extended resource of a GPU scheme)."""
    for t in pod_templates(obj) or []:
        spec = get_path(obj, t.spec) or {}
        for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
            res = c.get("resources") or {} if isinstance(c, dict) else {}
            names = [n for sec in ("requests", "limits") for n in (res.get(sec) or {})]
            if any(classify(n) is not None or resource_scheme(n) is not None for n in names):
                return True
    return False


def simulate_gpu_objects(path: Path) -> set[str]:
    inputs = load_inputs([str(path)])
    workloads = expand(inputs.documents)
    out = set()
    for s in workloads.sets:
        if _outside_dra(s.template):
            kind, _, name = s.owner.split("/", 2)
            out.add(_ref(kind, name))
    hides_gpus = {
        d.describe() for d in inputs.documents if custom_resource_gpu_fields(d.obj, vendors.gpu_names())
    }
    # refused by the apiserver (never created) while its pods ask for GPUs outside DRA
    refused_gpus = {d.describe() for d in inputs.documents if _template_gpus(d.obj)}
    for skipped in workloads.skipped:
        # skipped because of a GPU (or for another reason, e.g. a TrainJob without its runtime, while it names one)
        if (
            "GPU" in skipped.reason
            or "annotation" in skipped.reason
            or skipped.what in hides_gpus
            or (skipped.refused and skipped.what in refused_gpus)
        ):
            kind, _, name = skipped.what.partition(" ")
            out.add(_ref(kind, name.rsplit("/", 1)[-1]))
    return out


@pytest.mark.parametrize("path", outcomes.inputs(), ids=lambda p: p.stem)
def test_verbs_agree_on_gpu_objects(path: Path) -> None:
    if path.stem in KNOWN:
        pytest.xfail(KNOWN[path.stem])
    audit, migrate, simulate = audit_gpu_objects(path), migrate_gpu_objects(path), simulate_gpu_objects(path)
    assert audit == migrate == simulate, (
        f"audit {sorted(audit)} migrate {sorted(migrate)} simulate {sorted(simulate)}"
    )


def test_the_known_disagreements_still_disagree() -> None:
    """Strict: when a known disagreement is fixed, drop it from KNOWN."""
    for stem in KNOWN:
        path = outcomes.input_path(stem)
        # a crash is a failure of its own, not a disagreement that still holds
        agree = audit_gpu_objects(path) == migrate_gpu_objects(path) == simulate_gpu_objects(path)
        assert not agree, f"{stem} agrees now: remove it from KNOWN"
