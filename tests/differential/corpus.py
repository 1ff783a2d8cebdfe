"""Between oracle scenarios and the allocator conformance corpus (tests/conformance/allocator, format in
its README): a corpus case as an oracle scenario, and a (minimised) scenario as a corpus case whose
expectation is the oracle's answer."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from .compare import implementation

CORPUS = Path(__file__).resolve().parent.parent / "conformance" / "allocator"
# upstream's node(node1, region1), used when a case has no node (here and in tests/conformance)
DEFAULT_NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node-1", "labels": {"region": "region-1", "planet": "earth"}},
}


def case_to_scenario(case: dict[str, Any]) -> dict[str, Any]:
    """The oracle input for a corpus case. Upstream's table builds objects without API defaulting, so the
    oracle must not default them either (``noDefaults``).

    The oracle runs the first upstream implementation that supports the case's features; a case that
    upstream runs only on later implementations (``implementations``, set with ``EnableAllocators`` in
    upstream's test) gets FractionalCapacityRange on as well, which selects the incubating allocator and
    changes nothing without capacity requests."""
    features = {name: True for name in case["features"]}
    if "stable" not in case.get("implementations", ["stable"]) and implementation(features) == "stable":
        features["FractionalCapacityRange"] = True
    return {
        "features": features,
        "node": case.get("node", DEFAULT_NODE),
        "slices": [o for o in case["objects"] if o["kind"] == "ResourceSlice"],
        "classes": [o for o in case["objects"] if o["kind"] == "DeviceClass"],
        "claims": case["claims"],
        "allocatedDevices": case.get("allocatedDevices", []),
        "allocatedSharedDeviceIDs": case.get("allocatedSharedDeviceIDs", []),
        "allocatedCapacity": case.get("allocatedCapacity", {}),
        "fixedShareID": True,
        "noDefaults": True,
    }


def _taint_rules_applied(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The scenario's slices with its DeviceTaintRules' taints added to the devices they select, like the
    scheduler's ResourceSlice tracker (the corpus has no DeviceTaintRules of its own)."""
    slices = copy.deepcopy(doc["slices"])
    for rule in doc.get("deviceTaintRules") or []:
        sel = rule["spec"].get("deviceSelector")
        if sel is None:
            continue  # a rule without a selector selects no device (resourceslice/tracker applyPatches)
        for s in slices:
            spec = s["spec"]
            if sel.get("driver") not in (None, spec["driver"]) or sel.get("pool") not in (
                None,
                spec["pool"]["name"],
            ):
                continue
            for d in spec.get("devices") or []:
                if sel.get("device") in (None, d["name"]):
                    d.setdefault("taints", []).append(copy.deepcopy(rule["spec"]["taint"]))
    return slices


def _result(claim: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"devices": claim["results"], "nodeSelector": claim.get("nodeSelector")}
    if claim.get("config"):
        out["config"] = claim["config"]
    return out


def scenario_to_case(
    name: str, doc: dict[str, Any], oracle_result: dict[str, Any], note: str
) -> dict[str, Any]:
    """A corpus case (``diff-<name>``) for a scenario, expecting what the oracle answered."""
    if oracle_result.get("error"):
        expect: dict[str, Any] = {"error": oracle_result["error"]}
    elif not oracle_result.get("allocated"):
        expect = {"results": None}
    else:
        expect = {"results": [_result(c) for c in oracle_result["claims"]]}
    case: dict[str, Any] = {
        "name": f"diff-{name}",
        "source": f"differential: {note}",
        "features": sorted(n for n, on in doc["features"].items() if on),
        "node": doc["node"],
        "objects": [*doc["classes"], *_taint_rules_applied(doc)],
        "claims": doc["claims"],
    }
    for key in ("allocatedDevices", "allocatedSharedDeviceIDs", "allocatedCapacity"):
        if doc.get(key):
            case[key] = doc[key]
    case["expect"] = expect
    return case


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_case(case: dict[str, Any]) -> str:
    return yaml.dump(case, Dumper=_NoAliases, sort_keys=False, default_flow_style=None, width=110)
