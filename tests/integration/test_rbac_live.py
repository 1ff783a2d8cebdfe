"""Partial RBAC is not clean: the live verbs (verify, snapshot, plan, audit --cluster) run on the testbed's real
apiserver as real ServiceAccounts with real RBAC (tokens from the TokenRequest API).

- A ServiceAccount with no binding can read discovery only (``system:discovery`` is bound to every
  authenticated user): every verb exits 2 and names what it could not read (resource, verb, namespace) on
  stderr and in its JSON output; ``--allow-missing`` accepts named reads.
- A ServiceAccount bound to the shipped core ClusterRole (deploy/kubedra-clusterrole.yaml, no Secrets) reads
  everything the verbs read: complete (Helm releases need the opt-in role, so they are left out or accepted).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import Objects, bind_core_role, kubedra_inprocess, sa_kubeconfig

from kubedra.testing.controlplane import ControlPlane

pytestmark = pytest.mark.integration

PREFIX = f"rbac-it-{uuid.uuid4().hex[:6]}"
NS = PREFIX
CORE_SA = "core"
NOBODY_SA = "nobody"


@pytest.fixture(scope="module")
def world(controlplane: ControlPlane) -> Iterator[ControlPlane]:
    objects = Objects(controlplane.api)
    try:
        objects.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        for sa in (CORE_SA, NOBODY_SA):
            objects.add(
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa, "namespace": NS}}
            )
        bind_core_role(objects, PREFIX, NS, CORE_SA)
        yield controlplane
    finally:
        objects.cleanup()


def _fleet(tmp: Path, kubeconfig: Path, context: str) -> Path:
    path = tmp / "fleet.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubedra.io/v1alpha1",
                "kind": "Fleet",
                "clusters": [
                    {
                        "name": "tb",
                        "kubeconfig": str(kubeconfig),
                        "context": context,
                        "distribution": "kubeadm",
                        "criticality": "low",
                    }
                ],
            }
        )
    )
    return path


def _run(*args: str) -> tuple[int, Any, str]:
    res = kubedra_inprocess(*args)
    out = res.stdout
    data = json.loads(out) if out.strip().startswith(("{", "[")) else None
    return res.exit_code, data, res.stderr


def _named(stderr: str) -> set[str]:
    """Resources named on stderr as not read (``kubedra: incomplete: cluster X: cannot list R (...)``)."""
    out = set()
    for line in stderr.splitlines():
        if line.startswith("kubedra: incomplete: cluster ") and ": cannot " in line:
            out.add(line.split(": cannot ", 1)[1].split(" (cluster-wide)", 1)[0])
    return out


def test_discovery_only_service_account_is_incomplete_everywhere(world: ControlPlane, tmp_path: Path) -> None:
    kc = sa_kubeconfig(world, tmp_path, NS, NOBODY_SA)

    code, data, err = _run("verify", "--kubeconfig", str(kc), "-o", "json")
    assert code == 2, err
    rows = {(r["resource"], r["verb"], r["namespace"], r["cause"]) for r in data["incomplete"]}
    for resource in (
        "pods",
        "nodes",
        "events",
        "resourceclaims.resource.k8s.io",
        "resourceslices.resource.k8s.io",
    ):
        assert (resource, "list", None, "forbidden") in rows, resource
    assert ("kube-apiserver /metrics", "get", None, "forbidden") in rows
    assert {"list pods", "list nodes", "get kube-apiserver /metrics"} <= _named(err)
    assert "grant the reads" in err

    snap = tmp_path / "nobody.yaml"
    code, _, err = _run("snapshot", "--kubeconfig", str(kc), "-o", str(snap))
    assert code == 2, err
    assert {"list pods", "list deployments.apps", "list secrets (Helm 3 releases)"} <= _named(err)
    header = yaml.safe_load(snap.read_text())["kubedra"]
    assert {"resource": "pods", "verb": "list", "namespace": None}.items() <= next(
        r for r in header["notInspected"] if r["resource"] == "pods"
    ).items()

    # the snapshot taken with too little access stays incomplete offline
    code, data, err = _run("verify", "-f", str(snap), "-o", "json")
    assert code == 2, err
    assert data["incomplete"], err

    code, data, err = _run("plan", "--fleet", str(_fleet(tmp_path, kc, NOBODY_SA)), "-o", "json")
    assert code == 2, err
    assert {("tb", "pods", "forbidden")} <= {
        (r["cluster"], r["resource"], r["cause"]) for r in data["incomplete"]
    }
    assert "list pods" in _named(err)

    code, data, err = _run("audit", "--kubeconfig", str(kc), "--cluster", "-o", "json")
    assert code == 2, err
    assert {"pods", "nodes", "secrets (Helm 3 releases)"} <= {r["resource"] for r in data["incomplete"]}
    assert "list nodes" in _named(err)


def test_allow_missing_accepts_named_reads_only(world: ControlPlane, tmp_path: Path) -> None:
    kc = sa_kubeconfig(world, tmp_path, NS, NOBODY_SA)
    code, data, err = _run("verify", "--kubeconfig", str(kc), "-o", "json", "--allow-missing", "pods")
    assert code == 2, err
    assert "pods" not in {r["resource"] for r in data["incomplete"]}
    assert "list pods" not in _named(err)
    assert "list nodes" in _named(err)
    code, data, err = _run("verify", "--kubeconfig", str(kc), "-o", "json", "--allow-missing", "*")
    assert code in (0, 1), err
    assert data["incomplete"] == [], err


def test_core_role_is_complete(world: ControlPlane, tmp_path: Path) -> None:
    kc = sa_kubeconfig(world, tmp_path, NS, CORE_SA)

    code, data, err = _run("verify", "--kubeconfig", str(kc), "-o", "json")
    assert code in (0, 1), err
    assert data["incomplete"] == [], err
    assert "incomplete" not in err

    snap = tmp_path / "core.yaml"
    code, _, err = _run("snapshot", "--kubeconfig", str(kc), "-o", str(snap), "--no-helm-releases")
    assert code == 0, err
    assert yaml.safe_load(snap.read_text())["kubedra"]["notInspected"] == []

    # the core role has no Secrets: Helm releases are refused, named, and exit 2 unless accepted
    code, _, err = _run("snapshot", "--kubeconfig", str(kc), "-o", str(tmp_path / "h.yaml"))
    assert code == 2, err
    assert _named(err) == {"list secrets (Helm 3 releases)"}, err

    fleet = _fleet(tmp_path, kc, CORE_SA)
    code, data, err = _run("plan", "--fleet", str(fleet), "-o", "json", "--allow-missing", "secrets")
    assert code in (0, 1), err
    assert data["incomplete"] == [], err

    code, data, err = _run("audit", "--kubeconfig", str(kc), "--cluster", "-o", "json", "--no-helm-releases")
    assert code in (0, 1), err
    assert data["incomplete"] == [], err
    assert data["summary"]["notInspected"] == []
