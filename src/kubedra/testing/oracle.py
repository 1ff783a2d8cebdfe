"""The upstream DRA allocator as a test oracle.

``kubedra-oracle`` (``testbed/oracle``, built by ``make testbed``) links
``k8s.io/dynamic-resource-allocation/structured`` at the release's version and runs its ``Allocate`` on
scenarios given as JSON. A scenario is::

    {"features": {"PrioritizedList": true, ...},      # structured.Features fields by Go name
     "node": <v1 Node>, "slices": [<v1 ResourceSlice>], "classes": [<v1 DeviceClass>],
     "claims": [<v1 ResourceClaim>],                   # allocated together, in this order
     "allocatedDevices": ["driver/pool/device"], "allocatedSharedDeviceIDs": ["driver/pool/device/shareID"],
     "allocatedCapacity": {"driver/pool/device": {"capacityName": "quantity"}},
     "deviceTaintRules": [<DeviceTaintRule>], "fixedShareID": false}

and the answer is ``{"node", "allocated", "error", "claims": [{"namespace", "name", "results",
"nodeSelector", "config"}]}``, the per-node shape of ``kubedra allocate -o json``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kubedra.k8s import versions
from kubedra.testing import binaries

FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"

# structured.Features as kube-scheduler derives them from each release's default feature gates
# (data/versions.yaml testbed: allocatorFeatures, with the upstream source).
DEFAULT_FEATURES: dict[str, dict[str, bool]] = {
    version: {name: bool(on) for name, on in info["allocatorFeatures"].items()}
    for version, info in versions.testbed().items()
}


class OracleError(RuntimeError):
    """The oracle rejected its input (exit 2) or failed; the message is its stderr line."""


def find(version: str = binaries.DEFAULT_VERSION) -> Path | None:
    """The ``kubedra-oracle`` binary for ``version``, or None when not built."""
    return binaries.find(binaries.ORACLE, version)


def scenario(  # noqa: PLR0913 - one keyword per object kind of a scenario
    node: Mapping[str, Any],
    claims: Sequence[Mapping[str, Any]],
    slices: Sequence[Mapping[str, Any]] = (),
    classes: Sequence[Mapping[str, Any]] = (),
    features: Mapping[str, bool] | None = None,
    allocated_devices: Iterable[str] = (),
    allocated_shared_device_ids: Iterable[str] = (),
    allocated_capacity: Mapping[str, Mapping[str, str]] | None = None,
    device_taint_rules: Sequence[Mapping[str, Any]] = (),
    fixed_share_id: bool = True,
) -> dict[str, Any]:
    """Build one oracle input document (``fixed_share_id`` defaults on for comparable output)."""
    doc: dict[str, Any] = {
        "features": dict(features or {}),
        "node": node,
        "slices": list(slices),
        "classes": list(classes),
        "claims": list(claims),
        "allocatedDevices": list(allocated_devices),
        "allocatedSharedDeviceIDs": list(allocated_shared_device_ids),
        "allocatedCapacity": {k: dict(v) for k, v in (allocated_capacity or {}).items()},
        "fixedShareID": fixed_share_id,
    }
    if device_taint_rules:
        doc["deviceTaintRules"] = list(device_taint_rules)
    return doc


class Oracle:
    """Runs one ``kubedra-oracle`` binary; :meth:`run` for one scenario, :meth:`run_batch` for many in one
    process (start-up is a few milliseconds, but thousands of scenarios should still share one)."""

    def __init__(self, path: Path | None = None, version: str = binaries.DEFAULT_VERSION) -> None:
        self.version = version
        self.path = path or binaries.require(binaries.ORACLE, version)

    def _call(self, args: list[str], payload: bytes, timeout: float | None) -> Any:
        proc = subprocess.run(
            [str(self.path), *args], input=payload, capture_output=True, timeout=timeout, check=False
        )
        if proc.returncode != 0:
            message = proc.stderr.decode(errors="replace").strip() or f"exit status {proc.returncode}"
            raise OracleError(message)
        return json.loads(proc.stdout)

    def run(
        self, doc: Mapping[str, Any], timeout: float | None = 60, per_scenario_timeout: float = 0
    ) -> dict[str, Any]:
        args = [f"--timeout={per_scenario_timeout}s"] if per_scenario_timeout else []
        result: dict[str, Any] = self._call(args, json.dumps(doc).encode(), timeout)
        return result

    def run_batch(
        self,
        docs: Sequence[Mapping[str, Any]],
        timeout: float | None = 600,
        per_scenario_timeout: float = 0,
        workers: int | None = None,
    ) -> list[dict[str, Any]]:
        """Results in input order. Sent as JSON lines."""
        if not docs:
            return []
        args = ["--batch"]
        if per_scenario_timeout:
            args.append(f"--timeout={per_scenario_timeout}s")
        if workers:
            args.append(f"--workers={workers}")
        payload = "\n".join(json.dumps(d) for d in docs).encode()
        results: list[dict[str, Any]] = self._call(args, payload, timeout)
        return results


def run(doc: Mapping[str, Any], version: str = binaries.DEFAULT_VERSION) -> dict[str, Any]:
    """One scenario with the oracle for ``version``."""
    return Oracle(version=version).run(doc)


def run_batch(
    docs: Sequence[Mapping[str, Any]], version: str = binaries.DEFAULT_VERSION
) -> list[dict[str, Any]]:
    """Many scenarios in one oracle process, results in order."""
    return Oracle(version=version).run_batch(docs)
