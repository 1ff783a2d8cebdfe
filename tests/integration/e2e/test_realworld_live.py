"""kubedra simulate against the real control plane on every real-world file it can run.

Each file of tests/realworld whose workloads Kubernetes' own controllers run (tests/realworld/live.py says which,
and why the others cannot) is created on the testbed's 1.37 control plane, whose kube-controller-manager
creates the pods (deployment, replicaset, statefulset, daemonset, job controllers) and whose kube-scheduler
places them, on four 8 x H100-80GB nodes as ``kubedra simulate --nodes 4x8xH100-80GB`` generates them:

- device plugin: the Nodes advertise ``nvidia.com/gpu``; the file as it is;
- DRA: the Nodes publish the NVIDIA driver's ResourceSlices; the file after ``kubedra migrate``.

``kubedra simulate`` is then run on the same file with the Nodes (and slices) the apiserver stored, and the
pods placed and pending per workload must be the real ones. An object the apiserver refuses must not be
placed by simulate, and simulate must say so (exit 2, the object among those not simulated).

There is no kubelet: bound pods are marked Running and Ready here (a StatefulSet creates its next pod only
then), and pods are force-deleted between files. Namespaces the files name, the ServiceAccounts and
RuntimeClasses their pods name are created first, as the cluster the file was written for has them.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.realworld import live, outcomes

from kubedra.k8s.dnsnames import dns_label, dns_subdomain
from kubedra.testing import binaries
from kubedra.testing.controlplane import DEFAULT_CONTROLLERS, WORKLOAD_CONTROLLERS, ControlPlane
from kubedra.testing.fakecluster import (
    create_ignore_exists,
    listed,
    pod_state,
    ready_node,
    wait_for_service_account,
)
from kubedra.testing.kubeapi import ApiError, KubeAPI, object_path, resource_path
from kubedra.testing.require import unavailable

pytestmark = pytest.mark.integration

NODES = outcomes.NODES  # the cluster the expected outcomes are computed on
VERSION = outcomes.TARGET
_SETTLED_FOR = 1.5  # seconds without any pod change: the controllers are done
_WAITING_FOR = 10  # seconds a pod may wait, neither bound nor unschedulable, before it counts as pending
_files = itertools.count()

INPUTS = outcomes.inputs()
RUNNABLE = [p for p in INPUTS if live.why_not_live(p) is None]


# ------------------------------------------------------------------------------------------ the cluster


def _views(tmp: Path) -> dict[str, list[dict[str, Any]]]:
    """The device-plugin and DRA views of ``NODES`` as simulate generates them (``--save-cluster``)."""
    saved = tmp / "generated.yaml"
    # a manifest with no pods: simulate refuses an empty input (nothing to simulate), and only the nodes matter
    empty = tmp / "no-pods.yaml"
    empty.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kubedra-live\n")
    rc, _, err = outcomes._run(
        ["simulate", "-o", "json", "--nodes", NODES, "--save-cluster", str(saved), "-f", str(empty)]
    )
    assert rc == 0, err
    views: dict[str, list[dict[str, Any]]] = {}
    current = ""
    chunk: list[str] = []
    for line in [*saved.read_text().splitlines(), "# --- end ---"]:
        if line.startswith("# --- "):
            if current:
                views[current] = [d for d in yaml.safe_load_all("\n".join(chunk)) if d]
            current = "dra" if "dra" in line.lower() else "device-plugin"
            chunk = []
        else:
            chunk.append(line)
    assert set(views) == {"device-plugin", "dra"}, saved.read_text()[:500]
    return views


class Cluster:
    """The module's control plane with one view of the nodes at a time."""

    def __init__(self, cp: ControlPlane, tmp: Path) -> None:
        self.cp = cp
        self.api: KubeAPI = cp.api
        self.tmp = tmp
        self.views = _views(tmp)
        self.mode = ""
        self.created: list[dict[str, Any]] = []
        self.cluster_file = tmp / "cluster.yaml"
        self.placed: Counter[str] = Counter()  # mode -> pods the control plane placed, over all files
        self.files: Counter[str] = Counter()  # mode -> files run

    def use(self, mode: str) -> None:
        if mode == self.mode:
            return
        for obj in reversed(self.created):
            with contextlib.suppress(ApiError):
                self.api.request("DELETE", object_path(obj))
        self.created = []
        for obj in self.views[mode]:
            obj = copy.deepcopy(obj)
            obj["metadata"].pop("uid", None)
            obj["metadata"].pop("ownerReferences", None)
            status = obj.pop("status", None)
            if obj["kind"] == "DeviceClass":
                create_ignore_exists(self.api, obj)
                continue
            stored = self.api.create(obj)
            if obj["kind"] == "Node":
                stored = ready_node(self.api, stored, status or {})
            self.created.append(stored)
        # what the apiserver stored is what simulate is given
        kinds = [("v1", "Node"), ("resource.k8s.io/v1", "ResourceSlice")]
        if mode == "dra":
            kinds.append(("resource.k8s.io/v1", "DeviceClass"))
        given = [o for av, kind in kinds for o in listed(self.api, av, kind)]
        self.cluster_file.write_text(yaml.safe_dump_all(given))
        self.mode = mode


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    missing = [n for n in (*binaries.KUBERNETES, binaries.LAUNCHER) if binaries.find(n, VERSION) is None]
    if missing:
        unavailable(
            f"testbed binaries missing in {binaries.bin_dir(VERSION)} ({', '.join(missing)}): make testbed"
        )
    cp = ControlPlane(VERSION, controllers=(*DEFAULT_CONTROLLERS, *WORKLOAD_CONTROLLERS))
    cp.start()
    try:
        with tempfile.TemporaryDirectory(prefix="kubedra-live-") as tmp:
            yield Cluster(cp, Path(tmp))
    finally:
        cp.stop()


# ------------------------------------------------------------------------------------------ one file


def _key(kind: str, namespace: str, name: str) -> str:
    return f"{kind}/{namespace}/{name.rstrip('-')}"


class Run:
    """One file's objects on the control plane, in their own namespace when they name none."""

    def __init__(self, cluster: Cluster, docs: list[dict[str, Any]]) -> None:
        self.api = cluster.api
        self.cp = cluster.cp
        self.docs = docs
        self.namespace = f"rw{next(_files)}"
        self.created: list[dict[str, Any]] = []
        self.refused: dict[str, str] = {}  # workload key -> the apiserver's answer
        self.names: dict[tuple[str, str, str], str] = {}  # (kind, ns, stored name) -> name in the file

    def _ns(self, doc: dict[str, Any]) -> str:
        return str((doc.get("metadata") or {}).get("namespace") or self.namespace)

    def _out_ns(self, ns: str) -> str:
        return "default" if ns == self.namespace else ns

    def namespaces(self) -> set[str]:
        """The namespaces the file's objects go to (those that can exist: a name that is no DNS label cannot)."""
        named = {self._ns(d) for d in self.docs if d["kind"] != "Namespace"} | {self.namespace}
        return {ns for ns in named if dns_label(ns) is None}

    def create(self) -> None:
        api = self.api
        for ns in sorted(self.namespaces()):
            with contextlib.suppress(ApiError):
                create_ignore_exists(api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for ns in sorted(self.namespaces()):
            wait_for_service_account(api, ns)
        declared = {(d["kind"], self._ns(d), d["metadata"].get("name")) for d in self.docs}
        for d in self.docs:
            for spec in live.pod_specs(d):
                sa = spec.get("serviceAccountName") or spec.get("serviceAccount")
                if sa and ("ServiceAccount", self._ns(d), sa) not in declared:
                    self._prerequisite(
                        {
                            "apiVersion": "v1",
                            "kind": "ServiceAccount",
                            "metadata": {"name": sa, "namespace": self._ns(d)},
                        }
                    )
                rc = spec.get("runtimeClassName")
                if rc:
                    self._prerequisite(
                        {
                            "apiVersion": "node.k8s.io/v1",
                            "kind": "RuntimeClass",
                            "metadata": {"name": rc},
                            "handler": rc,
                        }
                    )
        for d in self.docs:
            obj = copy.deepcopy(d)
            meta = obj.setdefault("metadata", {})
            if d["kind"] == "Namespace":
                with contextlib.suppress(ApiError):
                    create_ignore_exists(api, obj)
                continue
            try:
                namespaced = "/namespaces/" in resource_path(obj["apiVersion"], obj["kind"], namespace="x")
            except ValueError:
                pytest.fail(f"{obj['kind']} is not known to kubedra.testing.kubeapi: add it there")
            if namespaced:
                meta["namespace"] = self._ns(d)
            try:
                stored = api.create(obj)
            except ApiError as err:
                if err.status == 409:
                    continue
                if live.group_kind(d) in live.WORKLOADS:
                    self.refused[
                        _key(
                            d["kind"],
                            self._out_ns(self._ns(d)),
                            meta.get("name") or meta.get("generateName", ""),
                        )
                    ] = str(err)
                    continue
                raise
            self.created.append(stored)
            smeta = stored["metadata"]
            self.names[(d["kind"], smeta.get("namespace", ""), smeta["name"])] = meta.get("name") or meta.get(
                "generateName", ""
            )

    def _prerequisite(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        if dns_subdomain(meta["name"]) is not None or dns_label(meta.get("namespace", "x")) is not None:
            return  # no such object can exist ("$K8S_SA_NAME"): the apiserver refuses the pods that name it
        if create_ignore_exists(self.api, obj) is not None:
            self.created.append(self.api.get(object_path(obj)))

    # -------------------------------------------------------------------------------------- settling

    def _pods(self) -> list[dict[str, Any]]:
        return [
            {**p, "apiVersion": "v1", "kind": "Pod"}
            for ns in sorted(self.namespaces())
            for p in self.api.list("v1", "Pod", namespace=ns)
        ]

    def settle(self, timeout: float = 90) -> list[dict[str, Any]]:
        """Wait until the controllers have made their pods and each is bound or unschedulable; bound pods
        are reported Running and Ready as a kubelet would (a StatefulSet waits for that)."""
        deadline = time.monotonic() + timeout
        last: list[tuple[str, str, str]] = []
        since = time.monotonic()
        while True:
            pods = self._pods()
            for p in pods:
                if p["spec"].get("nodeName") and p.get("status", {}).get("phase") != "Running":
                    with contextlib.suppress(ApiError):
                        self.api.apply_status(p, _running())
            state = sorted((p["metadata"]["namespace"], p["metadata"]["name"], pod_state(p)) for p in pods)
            now = time.monotonic()
            if state != last:
                last, since = state, now
            elif all(s != "waiting" for *_, s in state) and now - since >= _SETTLED_FOR:
                return pods
            elif now - since >= _WAITING_FOR:
                return pods  # a pod that waits for something that never comes (a claim template elsewhere)
            if now > deadline:
                raise AssertionError(
                    f"pods did not settle: {state}\nscheduler log:\n{self.cp.log_tail('kube-scheduler', 30)}"
                )
            time.sleep(0.3)

    def placements(self) -> dict[str, Counter[str]]:
        """Workload -> pods placed and pending, by following each pod's controller up to the file's object."""
        pods = self.settle()
        owners: dict[tuple[str, str], tuple[str, str]] = {}  # (ns, ReplicaSet) -> its Deployment
        for ns in self.namespaces():
            for rs in self.api.list("apps/v1", "ReplicaSet", namespace=ns):
                for ref in rs["metadata"].get("ownerReferences") or []:
                    if ref.get("controller"):
                        owners[(ns, rs["metadata"]["name"])] = (ref["kind"], ref["name"])
        out: dict[str, Counter[str]] = {}
        for p in pods:
            ns = p["metadata"]["namespace"]
            kind, name = "Pod", p["metadata"]["name"]
            for ref in p["metadata"].get("ownerReferences") or []:
                if ref.get("controller"):
                    kind, name = ref["kind"], ref["name"]
            if kind == "ReplicaSet" and (ns, name) in owners:
                kind, name = owners[(ns, name)]
            name = self.names.get((kind, ns, name), name)
            out.setdefault(_key(kind, self._out_ns(ns), name), Counter())[
                "placed" if p["spec"].get("nodeName") else "pending"
            ] += 1
        return out

    # -------------------------------------------------------------------------------------- clean-up

    def delete(self) -> None:
        api = self.api
        for obj in reversed(self.created):
            with contextlib.suppress(ApiError):
                api.request("DELETE", object_path(obj), {"propagationPolicy": "Background"})

        def gone() -> bool:
            left = 0
            for ns in self.namespaces():
                for p in api.list("v1", "Pod", namespace=ns):
                    left += 1
                    with contextlib.suppress(ApiError):
                        api.request(
                            "DELETE",
                            object_path({**p, "apiVersion": "v1", "kind": "Pod"}),
                            {"gracePeriodSeconds": 0},
                        )
                left += len(api.list("resource.k8s.io/v1", "ResourceClaim", namespace=ns))
            return left == 0

        api.wait_for(
            f"the pods and claims of {sorted(self.namespaces())} to go", gone, timeout=60, interval=0.5
        )
        with contextlib.suppress(ApiError):
            api.request("DELETE", resource_path("v1", "Namespace", self.namespace))


def _running() -> dict[str, Any]:
    conditions = ("PodScheduled", "Initialized", "ContainersReady", "Ready")
    return {"phase": "Running", "conditions": [{"type": c, "status": "True"} for c in conditions]}


# ------------------------------------------------------------------------------------------ kubedra


def _migrated(path: Path, tmp: Path) -> Path:
    """``kubedra migrate``'s output for ``path`` (the file itself when migrate changes nothing)."""
    out = tmp / f"migrated-{path.stem}"
    rc, _, err = outcomes._run(
        ["migrate", "-o", "json", "--target-version", VERSION, "--out", str(out), str(path)]
    )
    assert rc in (0, 1), err
    written = out / path.name
    return written if written.exists() else path


def _simulated(cluster: Cluster, path: Path, mode: str, run: Run) -> tuple[int, dict[str, Counter[str]], str]:
    rc, data, err = outcomes._run(
        [
            "simulate",
            "-o",
            "json",
            "--target-version",
            VERSION,
            "-f",
            str(cluster.cluster_file),
            "-f",
            str(path),
        ]
    )
    assert data is not None, err
    workloads = sorted(
        (
            (d.get("metadata") or {}).get("namespace") or "default",
            d["kind"],
            (d.get("metadata") or {}).get("name") or (d.get("metadata") or {}).get("generateName", ""),
        )
        for d in run.docs
        if live.group_kind(d) in live.WORKLOADS
    )
    out: dict[str, Counter[str]] = {}
    for p in data["modes"][mode]["pods"]:
        owner = [
            (ns, kind, name)
            for ns, kind, name in workloads
            if ns == p["namespace"] and (p["name"] == name or p["name"].startswith(name.rstrip("-") + "-"))
        ]
        assert owner, f"simulate's pod {p['namespace']}/{p['name']} belongs to no workload of the file"
        ns, kind, name = max(owner, key=lambda o: len(o[2]))
        out.setdefault(_key(kind, ns, name), Counter())["placed" if p["node"] else "pending"] += 1
    return rc, out, err


# ------------------------------------------------------------------------------------------ the tests


def test_every_file_is_run_or_says_why_not() -> None:
    """The list of files that cannot run is computed; KNOWN names only files that run."""
    assert RUNNABLE, "no real-world file runs on the testbed"
    names = {p.name for p in INPUTS}
    for name in live.KNOWN:
        assert name in names, f"KNOWN names {name}, which is not an input"
        assert live.why_not_live(outcomes.input_path(name[: -len(".yaml")])) is None, (
            f"{name} does not run live: remove it from KNOWN"
        )


# every file with the device plugin, then every file with DRA: the nodes change once
CASES = [
    pytest.param(path, mode, id=f"{mode}-{path.stem}")
    for mode in live.MODES
    for path in RUNNABLE
    if live.why_not_in_mode(path, mode) is None
]


@pytest.mark.parametrize(("path", "mode"), CASES)
def test_simulate_places_what_kube_scheduler_places(path: Path, mode: str, cluster: Cluster) -> None:
    cluster.use(mode)
    source = path if mode == "device-plugin" else _migrated(path, cluster.tmp)
    docs = live.documents(source)
    assert docs is not None
    run = Run(cluster, docs)
    try:
        run.create()
        real = run.placements()
    finally:
        run.delete()
    cluster.placed[mode] += sum(c["placed"] for c in real.values())
    cluster.files[mode] += 1
    rc, simulated, err = _simulated(cluster, source, mode, run)
    for key, answer in run.refused.items():
        assert not simulated.get(key, Counter())["placed"], (
            f"simulate places {key}, which the apiserver refuses: {answer}"
        )
    if run.refused:
        assert rc == 2, f"the apiserver refuses {sorted(run.refused)}; simulate exits {rc}, not 2"
        assert "the apiserver refuses" in err, f"simulate does not say what it did not simulate: {err}"
    real_d = {k: dict(v) for k, v in sorted(real.items())}
    sim_d = {k: dict(v) for k, v in sorted(simulated.items()) if k not in run.refused}
    known = live.KNOWN.get(path.name, {}).get(mode)
    if known is not None:
        assert sim_d != real_d, f"{path.name} ({mode}) now agrees: remove it from live.KNOWN ({known})"
        return
    assert sim_d == real_d, (
        f"kubedra simulate differs from the control plane on {path.name} ({mode}):\n"
        f"  control plane {json.dumps(real_d)}\n  simulate      {json.dumps(sim_d)}"
    )


def test_the_files_placed_pods_in_both_modes(cluster: Cluster) -> None:
    """Runs after the files: agreement on files that placed nothing would prove nothing."""
    if sum(cluster.files.values()) < len(CASES):
        pytest.skip("only some files were run")
    # 33 pods with the device plugin and 47 with DRA when this was written (42 and 58 files)
    assert cluster.placed["device-plugin"] >= 30, dict(cluster.placed)
    assert cluster.placed["dra"] >= 40, dict(cluster.placed)
