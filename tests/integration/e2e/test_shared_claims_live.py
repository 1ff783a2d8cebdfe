"""The real kube-scheduler places a migrated time-slicing fleet as densely as the device plugin did.

`kubedra migrate` turns a Deployment of 30 pods on a time-slicing config with replicas 4 into 8 groups sharing one
ResourceClaim each. Here the migrated objects go to the testbed's 1.37 control plane (one 8-GPU node, its
ResourceSlices, migrate's time-slicing DeviceClass, the shared ResourceClaims) and the Deployments' pods are created
as their ReplicaSets would create them: kube-scheduler must bind all 30 (the device plugin's 8 GPUs x 4), and
kubedra's simulator must agree.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import pytest
import yaml
from tests.unit.migrate.test_gpu import TS_CONFIGMAP, TS_POLICY

from kubedra.migrate.context import MigrateOptions
from kubedra.migrate.engine import Migrator, SourceFile
from kubedra.sources.yamldoc import YamlFile
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import GROUP_LABEL, create_ignore_exists

from .harness import NodeGroup, Scenario, Testbed

pytestmark = pytest.mark.integration

FLEET = (
    TS_CONFIGMAP
    + "---\n"
    + TS_POLICY
    + """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: infer, namespace: ml}
spec:
  replicas: 30
  selector: {matchLabels: {app: infer}}
  template:
    metadata: {labels: {app: infer}}
    spec:
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 10m, memory: 10Mi}
          limits: {nvidia.com/gpu: 1}
"""
)


def _migrated() -> list[dict[str, Any]]:
    rep = Migrator(MigrateOptions()).migrate([SourceFile("f.yaml", FLEET, YamlFile(FLEET, "f.yaml"))])
    assert not [f for f in rep.findings if f.level == "manual"]
    return [d for d in yaml.safe_load_all(rep.files[0].output) if d]


def test_real_scheduler_binds_the_migrated_fleet(controlplane: ControlPlane) -> None:
    bed = Testbed(controlplane, Scenario("shared-claims", [NodeGroup("h100", "H100-80GB", 8)], {}, []))
    bed.create()
    try:
        objs = _migrated()
        for dc in (o for o in objs if o["kind"] == "DeviceClass"):
            create_ignore_exists(bed.api, dc)
        for claim in (o for o in objs if o["kind"] == "ResourceClaim"):
            claim = copy.deepcopy(claim)
            claim["metadata"]["namespace"] = bed.namespace
            bed.api.create(claim)
        names = []
        for dep in (o for o in objs if o["kind"] == "Deployment"):
            for i in range(dep["spec"]["replicas"]):
                tmpl = copy.deepcopy(dep["spec"]["template"])
                name = f"{dep['metadata']['name']}-{i}"
                tmpl["spec"]["nodeSelector"] = {GROUP_LABEL: bed.prefix}
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": name,
                        "namespace": bed.namespace,
                        "labels": tmpl["metadata"]["labels"],
                    },
                    "spec": tmpl["spec"],
                }
                bed.pods.append(pod)
                bed.api.create(pod)
                names.append(name)
        bed._settle(names, timeout=120)

        def all_bound() -> bool:
            pods = bed._pods()
            return all(pods[n]["spec"].get("nodeName") for n in names)

        # pods tried before their group's claim was allocated are retried on the claim's update
        with contextlib.suppress(TimeoutError):
            bed.api.wait_for("all pods bound", all_bound, timeout=60)
        pods = bed._pods()
        bound = [n for n in names if pods[n]["spec"].get("nodeName")]
        assert len(names) == 30
        assert len(bound) == 30, {
            n: pods[n].get("status", {}).get("conditions") for n in names if n not in bound
        }
    finally:
        bed.delete()
