"""The waves of a cluster's plan: the control-plane wave, the canary, each node pool's waves with their
command values and smoke tests."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from kubedra.plan import templates
from kubedra.plan.inventory import ClusterState, GpuNode, PoolState
from kubedra.plan.model import Capacity, Step, Wave
from kubedra.plan.versions import minor_of
from kubedra.text import count


def wave_values(state: ClusterState, target: str, target_patch: str) -> dict[str, str]:
    spec = state.spec
    common = templates.common()
    drv = common["driver"]
    ctx = spec.context or spec.name
    prov = spec.provider
    default_ns, default_name = common["devicePlugin"]["defaultDaemonSet"]
    dp = state.device_plugin or (str(default_ns), str(default_name))
    cur_minor = minor_of(state.version)
    label_key, _, _ = str(common["devicePlugin"]["operatorLabel"]).partition("=")
    drv_ns, drv_ds = str(drv["namespace"]), str(drv["kubeletPluginDaemonSet"])
    if state.gpu_cluster and not state.cluster_policy:  # the operator's kubelet plugin, in its namespace
        drv_ns, drv_ds = state.dra_driver_daemonset or (
            "<gpu-operator-namespace>",
            str(common["gpuOperator"]["gpuClusterKubeletPluginDaemonSet"]),
        )
    return {
        "cluster": spec.name,
        "pool": "<node-pool>",
        "context": ctx,
        "kctx": f"--context {ctx}",
        "kctx_kubedra": f"--context {ctx}",
        "helm_ctx": f"--kube-context {ctx}",
        "target": target,
        "target_patch": target_patch,
        "current": f"1.{cur_minor}" if cur_minor else "<current>",
        "current_patch": state.version.lstrip("v") if state.version else "<current>",
        "stack_label": str(common["stackLabel"]),
        "stack_value": str(common["stackValue"]),
        "repo_name": str(drv["repoName"]),
        "repo_url": str(drv["repoUrl"]),
        "chart": str(drv["chart"]),
        "driver_version": str(drv["version"]),
        "release": str(drv["release"]),
        "driver_namespace": drv_ns,
        "driver_daemonset": drv_ds,
        "cluster_policy": state.cluster_policy or "",
        "gpu_cluster": state.gpu_cluster or "",
        "operator_label": str(common["devicePlugin"]["operatorLabel"]),
        "operator_label_key": label_key,
        "dp_namespace": dp[0],
        "dp_name": dp[1],
        "manifests": spec.manifests or f"manifests/{spec.name}",
        "cluster_name": prov.get("clusterName", spec.name),
        "region": prov.get("region", "<region>"),
        "location": prov.get("location", prov.get("region", "<location>")),
        "project": prov.get("project", "<project>"),
        "resource_group": prov.get("resourceGroup", "<resource-group>"),
        "state_store": prov.get("stateStore", "s3://<kops-state-store>"),
        "backup_plan": prov.get("backupPlan", "<backup-plan>"),
    }


# ------------------------------------------------------------------------------------------------ waves


def control_plane_wave(
    state: ClusterState,
    values: dict[str, str],
    hop_list: list[str],
    number: int,
    config_steps: Sequence[Step] = (),
    gang_step: Step | None = None,
) -> Wave:
    dist = templates.distribution(state.spec.distribution)
    common = templates.common()
    v = {**values, "wave": str(number)}
    etcd = dist["etcd"]
    steps = [
        Step(
            "Capture the cluster and check it before the change",
            templates.render_all(
                [
                    "kubedra snapshot {{kctx_kubedra}} -o snapshots/{{cluster}}-before-wave-{{wave}}.yaml",
                    "kubedra audit --context {{context}} --target-version {{target}}   # no error findings left",
                ],
                v,
            ),
        ),
        *config_steps,
    ]
    cp = dist["controlPlane"]
    rollback_points: list[tuple[str, str, dict[str, str]]] = []  # (hop, version before it, values)
    previous = values["current"]
    each: list[str | None] = [*hop_list] or [None]
    for hop in each:
        # one backup and rollback point per minor: a multi-minor hop can be stopped (and undone) after any minor
        bv = {**v, "wave": f"{number}-before-{hop}" if hop and len(hop_list) > 1 else str(number)}
        what = f" (rollback point before {hop})" if hop and len(hop_list) > 1 else ""
        steps += [
            Step(
                ("Back up etcd" if not etcd.get("managed") else "Back up (etcd is managed by the provider)")
                + what,
                templates.render_all(etcd["backup"], bv),
                note="Managed control plane: the provider snapshots etcd; you cannot restore it yourself, so keep an "
                "object-level backup."
                if etcd.get("managed")
                else "",
            ),
            Step("Check the backup" + what, templates.render_all(etcd["verify"], bv)),
        ]
        if hop is None:
            break
        hv = {**v, "hop": hop, "hop_patch": values["target_patch"] if hop == values["target"] else f"{hop}.0"}
        steps.append(
            Step(
                f"Upgrade the control plane to {hop}", templates.render_all(cp["upgrade"] + cp["verify"], hv)
            )
        )
        rollback_points.append((hop, previous, bv))
        previous = hop
    if gang_step is not None:
        steps.append(gang_step)
    if not hop_list:
        steps.append(
            Step(
                "Control plane",
                [],
                note=f"already at {state.version or 'an unknown version'}; no control-plane upgrade in this wave",
            )
        )
    node_up = cp.get("nodeUpgrade") or []
    if hop_list and node_up:
        pools = [p.name for p in state.pools] or ["<node-pool>"]
        cmds: list[str] = []
        for pool in pools:
            cmds += templates.render_all(node_up, {**v, "pool": pool})
        steps.append(
            Step(
                f"Upgrade the GPU node pools' kubelets to {values['target']} (rolling, before any node moves)",
                cmds,
                note="kubelets may lag the API server by up to 3 minors, but the DRA kubelet plugin needs a kubelet "
                "that serves resource.k8s.io/v1 (1.34+); managed pools replace nodes, so do it before labelling",
            )
        )
    drv = common["driver"]
    vendor = templates.vendor()
    by_hand = _vendors_by_hand(state)  # GPU nodes only of vendors the steps are not written for
    driver_steps, values_file, preflight = _driver_steps(state, values, v, by_hand)
    steps += driver_steps
    if len(rollback_points) > 1:
        rollback_cmds = []
        for hop, before, bv in reversed(rollback_points):
            rollback_cmds.append(f"# undo {hop} (back to {before}): restore the backup taken before {hop}")
            rollback_cmds += templates.render_all(
                cp["rollback"], {**bv, "hop": hop, "hop_patch": f"{hop}.0", "current": before}
            )
    else:
        rollback_cmds = templates.render_all(
            cp["rollback"], {**v, "hop": values["target"], "hop_patch": values["target_patch"]}
        )
    if not by_hand and not (
        state.gpu_cluster and not state.cluster_policy
    ):  # a GPUCluster's driver is the operator's to roll back
        rollback_cmds += templates.render_all(drv["rollback"], v)
    rollback_minutes = int(cp["rollbackMinutes"]) if hop_list else 15
    note = (
        "restores the etcd snapshot taken in this wave"
        if cp.get("downgradeSupported")
        else "the provider cannot downgrade the control plane: this is a fix-forward plus object restore"
    )
    return Wave(
        number=number,
        cluster=state.spec.name,
        kind="control-plane",
        title=f"{state.spec.name}: etcd backup, control plane {' → '.join(hop_list) or 'unchanged'}, DRA driver"
        + (" by hand" if by_hand else ""),
        steps=steps,
        rollback=rollback_cmds,
        rollback_minutes=rollback_minutes,
        rollback_note=note,
        gate=[
            "`kubectl get --raw=/readyz` ok and every control-plane component at the target version",
            "`kubedra verify` exits 0 (nothing moved yet: the device plugin still serves every GPU)",
            *(
                []
                if by_hand
                else [
                    f"the DRA driver's controller is Ready and the DeviceClasses {' / '.join(vendor.claim_classes)} "
                    "exist"
                ]
            ),
        ],
        duration_minutes=45 + 60 * len(hop_list),
        files={} if by_hand else {f"dra-driver-values.yaml ({state.spec.name})": values_file},
        warnings=[] if by_hand else [f"driver preflight: {p}" for p in preflight],
        blast_radius="control plane and API of the whole cluster; no GPU node is drained",
    )


def _driver_steps(
    state: ClusterState, values: dict[str, str], v: dict[str, str], by_hand: str
) -> tuple[list[Step], str, list[str]]:
    """The control-plane wave's DRA driver and device-plugin steps, the driver's values file and its preflight
    problems; one step by hand when the cluster's GPU nodes are all of vendors the steps are not written for."""
    steps: list[Step] = []
    common = templates.common()
    drv = common["driver"]
    values_file = templates.render(drv["values"], v)
    gates, why = driver_feature_gates(state)
    if gates:
        values_file += "featureGates:\n" + "".join(f"  {g}: true   # {why[g]}\n" for g in gates)
    install = templates.render_all(drv["install"] + drv["check"], v)
    vendor = templates.vendor()
    preflight = vendor.driver_preflight(str(drv["version"]), int(values["target"].split(".")[1]), gates)
    gate_note = ""
    if gates:
        excl = templates.common()["driverFeatureGates"]["exclusiveWith"]
        clash = sorted({x for g in gates for x in excl.get(g, [])})
        gate_note = f"; driver feature gates {', '.join(gates)} in the values (alpha)" + (
            f", which rule out {', '.join(clash)}" if clash else ""
        )
    gpu_op = common["gpuOperator"]
    if by_hand:
        steps.append(
            Step(
                "Install the DRA driver of the cluster's GPUs: by hand",
                [],
                note=f"the cluster's GPU nodes have {by_hand} GPUs: "
                + "; ".join(sorted({u.reason for u in state.unsupported})),
            )
        )
    elif state.gpu_cluster and not state.cluster_policy:
        steps.append(
            Step(
                f"Check the {vendor.title} DRA driver the GPU Operator's GPUCluster deploys",
                templates.render_all(gpu_op["gpuClusterCheck"], v),
                note=templates.render(str(gpu_op["gpuClusterNote"]), v).strip(),
            )
        )
    else:
        operator_why = (
            f"; {templates.render(str(gpu_op['clusterPolicyNote']), v).strip()}"
            if state.cluster_policy
            else ""
        )
        steps.append(
            Step(
                f"Install the {vendor.title} DRA driver (kubelet plugin only on nodes labelled for DRA: none yet)",
                install,
                note="writes no ResourceSlice until a wave labels nodes" + gate_note + operator_why,
            )
        )
    dp_note = ""
    if state.gpu_operator:
        dp_cmds: list[str] = []
        dp_note = (
            f"GPU Operator: each wave sets {values['operator_label']} on its nodes, which stops the operator's "
            "device plugin there"
        )
    else:
        dp_cmds = [templates.render(str(common["devicePlugin"]["excludePatch"]), v)]
        if state.device_plugin is None:
            dp_note = "no device-plugin DaemonSet found in the snapshot: adjust the namespace/name"
    if not by_hand:
        steps.append(Step("Keep the device plugin off nodes labelled for DRA", dp_cmds, note=dp_note))
    return steps, values_file, preflight


def _vendors_by_hand(state: ClusterState) -> str:
    """The vendors (titles, "" for none) of a cluster whose GPU nodes are all of vendors the plan's steps are not
    written for (Vendor.unsupported("plan")): its control-plane wave installs no driver of the steps' vendor."""
    if state.gpu_nodes or not state.unsupported:
        return ""
    return " and ".join(sorted({u.vendor for u in state.unsupported}))


def driver_feature_gates(state: ClusterState) -> tuple[list[str], dict[str, str]]:
    """The DRA driver's feature gates the cluster's GPU sharing needs (from the sharing its GPU nodes' feature
    discovery labels say: NVIDIA's GFD ``nvidia.com/gpu.sharing-strategy``), and why."""
    table = templates.common()["driverFeatureGates"]["sharing"]
    vendor = templates.vendor()
    why: dict[str, str] = {}
    for n in state.gpu_nodes:
        hit = table.get(vendor.sharing_strategy(n.labels) or "")
        if hit:
            why[str(hit["gate"])] = str(hit["why"])
    return sorted(why), why


def canary_step(
    values: dict[str, str], pool: PoolState, anywhere: list[tuple[str, str, str]], v: dict[str, str]
) -> Step:
    """A migrated copy of one real workload of the pool, one replica, on the first wave's nodes, before the
    rest of the fleet moves (the smoke test proves a claim works; the canary proves *this* workload does)."""
    candidates = pool.workloads or anywhere
    if not candidates:
        return Step(
            "Canary: a migrated copy of one real GPU workload on the wave's nodes",
            [],
            note="no GPU Deployment or StatefulSet in the snapshot: pick a workload by hand",
        )
    kind, ns, name = sorted(candidates)[0]
    res = kind.lower()
    ctx = values["kctx"]
    file = f"canary-{name}.yaml"
    return Step(
        f"Canary: a migrated copy of {kind} {ns}/{name} (1 replica) on the wave's nodes",
        [
            f"kubectl {ctx} -n {ns} get {res} {name} -o yaml | kubedra migrate -f - --target-version {v['target']} > {file}",
            f"# edit {file}: metadata.name {name}-canary, spec.replicas 1, a pod label of its own in selector and "
            f"template, nodeSelector {v['stack_label']}: {v['stack_value']}; drop status and resourceVersion",
            f"kubectl {ctx} apply -f {file} && kubectl {ctx} -n {ns} rollout status {res}/{name}-canary --timeout=15m",
            f"kubectl {ctx} -n {ns} delete {res} {name}-canary   # when its own checks passed",
        ],
        note="the canary runs the workload's real image and requests through DRA before any of its replicas "
        "depends on it",
    )


def _smoke(values: dict[str, str], pool: PoolState, wave: int) -> str:
    extra = "\n".join(f"    {k}: {v}" for k, v in pool.selector.items() if k != values["stack_label"])
    return templates.render(
        templates.common()["smokeTest"], {**values, "wave": str(wave), "pool_selector_yaml": extra}
    )


def node_wave(  # noqa: PLR0913 - a wave's cluster, pool and batch, and its place in the plan
    state: ClusterState,
    values: dict[str, str],
    pool: PoolState,
    batch: list[GpuNode],
    migrated: list[GpuNode],
    number: int,
    bridge: bool,
    last_of_pool: bool,
    canary: bool = False,
    platform_rule: Mapping[str, Any] | None = None,
) -> Wave:
    common = templates.common()
    w = common["wave"]
    names = [n.name for n in batch]
    v = {**values, "wave": str(number), "nodes": " ".join(names), "pool": pool.name}
    steps = [Step("Before the wave", templates.render_all(w["before"], v))]
    if platform_rule is not None:
        sources = "; ".join(str(src["url"]) for src in platform_rule.get("sources") or [])
        steps.append(
            Step(
                f"{platform_rule['title']}: the whole pool {pool.name} moves in this wave",
                [f"# {templates.render(str(platform_rule['replace']), v).strip()}"],
                note=f"{templates.render(str(platform_rule['why']), v).strip()} (sources: {sources})",
            )
        )
    steps += [
        Step("Cordon and drain the wave's nodes", templates.per_node(w["cordon"] + w["drain"], v, names)),
        Step("Switch the nodes from the device plugin to DRA", templates.per_node(w["switch"], v, names)),
        Step(
            "Wait for the DRA driver and the nodes' ResourceSlices", templates.per_node(w["driver"], v, names)
        ),
        Step("Uncordon", templates.render_all(w["uncordon"], v)),
    ]
    if last_of_pool:
        vendor = templates.vendor()
        steps.append(
            Step(
                f"Apply the migrated manifests (pool {pool.name} is now all on DRA)",
                templates.render_all(w["migrate"], v),
                note=f"with DRAExtendedResource (on by default from 1.36) pods still asking for {vendor.gpu_resource} "
                f"run on DRA nodes through the {vendor.gpu_class} DeviceClass; claims are applied once the pool is "
                "complete"
                if bridge
                else f"before 1.36, pods asking for {vendor.gpu_resource} cannot use DRA nodes: apply the pool's "
                "migrated manifests now",
            )
        )
    if canary:
        steps.append(canary_step(values, pool, state.gpu_workloads, v))
    steps += [
        Step(
            "Smoke test: one pod with a ResourceClaim on the wave's nodes",
            templates.render_all(w["smoke"], v),
        ),
        Step("Verify against the snapshot taken before the wave", templates.render_all(w["verify"], v)),
    ]
    rollback = templates.per_node(w["rollback"], v, names)
    rb_minutes = int(w["rollbackMinutes"]) + int(w["rollbackMinutesPerNode"]) * len(batch)

    # capacity while this wave is drained, and after it
    wave_set = set(names)
    others = [n for n in pool.nodes if n.name not in wave_set]
    migrated_set = {n.name for n in migrated}
    dp_left = sum(n.gpus_before for n in others if n.name not in migrated_set and n.stack == "device-plugin")
    dra_ready = sum(
        n.gpus_after or n.gpus_before for n in others if n.name in migrated_set or n.stack == "dra"
    )
    during = dp_left + (dra_ready if bridge else 0)
    after_dra = dra_ready + sum(n.gpus_after or n.gpus_before for n in batch)
    after = dp_left + after_dra if bridge or last_of_pool else dp_left
    first = not any(n.name in migrated_set for n in pool.nodes if n.stack == "device-plugin")
    cap = Capacity(pool.name, pool.gpus_before, during, after, pool.demand, pool.gpus_after, first)
    warnings = []
    if cap.short > 0:
        warnings.append(
            f"while wave {number} is drained pool {pool.name} keeps {during} GPUs for {cap.demand:g} in use: "
            f"about {math.ceil(cap.short)} GPUs of workloads would have no GPU (Pending). Make the wave smaller "
            "(--wave-size), add surge nodes to the pool, or scale the workloads down first."
        )
    unknown = [n.name for n in batch if n.gpus_after == 0]
    if unknown:
        warnings.append(
            f"no DRA inventory known for {', '.join(unknown)} (GPU model not in the catalogue or no GFD labels): "
            "check its ResourceSlices by hand in the driver step"
        )
    # the nodes whose DRA GPUs the capacity above counts as their device-plugin GPUs (``gpus_after or
    # gpus_before``) without knowing them: this wave's capacity is not checked (exit 1, not a clean plan)
    assumed = unknown + [
        n.name for n in others if n.gpus_after == 0 and (n.name in migrated_set or n.stack == "dra")
    ]
    gpus = sum(n.gpus_before for n in batch)
    total = sum(n.gpus_before for n in state.gpu_nodes) or 1
    return Wave(
        number=number,
        cluster=state.spec.name,
        kind="nodes",
        title=f"{state.spec.name}/{pool.name}: {count(len(batch), 'node')} to DRA"
        + (f" (the whole pool: {platform_rule['title']})" if platform_rule is not None else ""),
        pool=pool.name,
        nodes=names,
        gpus=gpus,
        steps=steps,
        rollback=rollback,
        rollback_minutes=rb_minutes,
        rollback_note="nodes go back to the device plugin; the control plane stays at the target version",
        gate=[str(g) for g in common["gate"]],
        duration_minutes=30 + 10 * len(batch),
        capacity=cap,
        warnings=warnings,
        unchecked=assumed,
        files={f"smoke-{state.spec.name}-wave-{number}.yaml": _smoke(values, pool, number)},
        blast_radius=f"{count(len(batch), 'node')}, {count(gpus, 'GPU')} ({100 * gpus / total:.0f}% of the cluster's GPUs), "
        f"up to {count(pool.pods, 'GPU pod')} of pool {pool.name} rescheduled",
    )
