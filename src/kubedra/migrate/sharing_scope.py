"""Which device-plugin sharing config applies to a workload: decided per pod template, or reported.

A device plugin with per-node configs (NVIDIA's: k8s-device-plugin README "Multiple Config File Example",
cmd/config-manager) applies one config per node: the config named by the vendor's node label
(:attr:`kubedra.vendors.base.Vendor.sharing_node_label`), else the default —
``DEFAULT_CONFIG`` (Helm ``config.default``, GPU Operator ClusterPolicy ``devicePlugin.config.default``), else the
fallbacks (``named``: a config called ``default``; ``single``: the only config). A node with neither gets no
sharing (the plugin fails to start, or the GPU Operator's ``empty`` fallback applies).

So a pod gets a sharing config only if every node it can land on uses it. :func:`Scope.decide` answers from
the ConfigMap's structure (default vs named configs), the plugin DaemonSet or ClusterPolicy when present in the
input (which ConfigMap, which default, which nodes), Node objects when present, and the pod template's
``nodeSelector``/required node affinity. When the nodes it can land on may use different configs, the answer is
a reason for a manual item, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra import vendors
from kubedra.k8s import namespaces, platforms
from kubedra.model.nodeaffinity import (
    NodeSelectorError,
    check_node_selector,
    node_selector_matches,
    required_node_selector,
)
from kubedra.model.objects import NodeSelector
from kubedra.text import count
from kubedra.vendors import SharedClass, SharingConfigRef, Vendor


@dataclass
class PluginConfig:
    """One device-plugin deployment's configs: ConfigMap key -> {advertised resource: sharing class}."""

    namespace: str
    name: str
    configs: dict[str, dict[str, SharedClass]]
    defaults: tuple[str | None, ...] = (None,)  # config(s) nodes without the label may use (None: no sharing)
    default_why: str = ""
    node_selector: dict[str, str] = field(default_factory=dict)  # nodes the plugin DaemonSet runs on
    label: str = ""  # the node label that names a node's config
    explicit: bool = False  # named by a plugin DaemonSet or ClusterPolicy in the input

    def describe(self) -> str:
        return f"ConfigMap {self.namespace + '/' if self.namespace else ''}{self.name}"

    def outcome(self, key: str | None, resource: str) -> SharedClass | None:
        if key is None:
            return None
        return self.configs.get(key, {}).get(resource)


@dataclass(frozen=True)
class Decision:
    shared: SharedClass | None  # the sharing class to use; None: exclusive GPUs
    manual: str | None = None  # cannot be decided, and why
    why: str = ""  # how it was decided (for the change note)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _plugin_refs(objects: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], SharingConfigRef]:
    """(namespace, ConfigMap name) -> what a vendor's plugin DaemonSet or operator policy in the input says about
    it."""
    return {key: ref for v in vendors.all() for key, ref in v.sharing_config_refs(objects).items()}


def sharing_configmap(
    obj: Mapping[str, Any], *, extended_resource: bool, interval: str
) -> tuple[Vendor, list[SharedClass], list[str]] | None:
    """The vendor whose device-plugin sharing config ConfigMap ``obj`` is, its sharing classes and all its config
    keys; ``None``: no vendor's sharing config."""
    for v in vendors.all():
        found = v.sharing_classes(obj, extended_resource=extended_resource, interval=interval)
        if found is not None:
            return v, *found
    return None


@dataclass
class Scope:
    plugins: list[PluginConfig] = field(default_factory=list)
    nodes: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # (name, labels) of input Nodes
    interval: str = "Default"  # --interval, for the classes of platform time-sharing
    # containers per GPU -> the class of a platform's time-sharing node pools (GKE), made when first decided
    platform_classes: dict[int, SharedClass] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)  # platform classes already written with a workload

    @classmethod
    def build(
        cls,
        objects: Sequence[Mapping[str, Any]],
        configmaps: Sequence[tuple[Mapping[str, Any], Vendor, list[SharedClass], list[str]]],
    ) -> Scope:
        """``configmaps``: (ConfigMap, the vendor whose plugin reads it, its sharing classes, all its config keys)."""
        refs = _plugin_refs(objects)
        scope = cls()
        for obj in objects:
            if obj.get("kind") == "Node" and obj.get("apiVersion") == "v1":
                meta = _map(obj.get("metadata"))
                labels = _map(meta.get("labels"))
                scope.nodes.append((str(meta.get("name") or ""), {str(k): str(v) for k, v in labels.items()}))
        for cm, vendor, classes, keys in configmaps:
            meta = _map(cm.get("metadata"))
            ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
            ref = refs.get((namespaces.effective(ns), name)) or refs.get(("*", name))
            label = (ref.label if ref is not None else "") or vendor.sharing_node_label or ""
            configs: dict[str, dict[str, SharedClass]] = {k: {} for k in keys}
            for sc in classes:
                configs.setdefault(sc.data_key, {})[sc.resource] = sc
            defaults, why = vendor.sharing_defaults(keys, ref)
            scope.plugins.append(
                PluginConfig(
                    namespace=ns,
                    name=name,
                    configs=configs,
                    defaults=defaults,
                    default_why=why,
                    node_selector=dict(ref.node_selector) if ref else {},
                    label=label,
                    explicit=ref is not None,
                )
            )
        if any(
            p.explicit for p in scope.plugins
        ):  # the plugin names its ConfigMap: the others are not its config
            scope.plugins = [p for p in scope.plugins if p.explicit]
        return scope

    def shares(self, resource: str) -> bool:
        return any(resource in c for p in self.plugins for c in p.configs.values())

    def decide(self, resource: str, pod_spec: Mapping[str, Any]) -> Decision:  # noqa: C901 - which plugin config applies to a pod: each case its own decision
        plugins = [p for p in self.plugins if any(resource in c for c in p.configs.values())]
        if not plugins:
            return self._platform(resource, pod_spec)
        selector = {str(k): str(v) for k, v in _map(pod_spec.get("nodeSelector")).items()}
        required = required_node_selector(pod_spec.get("affinity"))
        if required is not None:
            try:
                check_node_selector(required)
            except NodeSelectorError as e:
                return Decision(
                    None,
                    manual=(
                        f"{resource}: the pod's required node affinity is invalid ({e}): the API server refuses "
                        "the pod, so no node and no sharing config applies; fix the affinity, then migrate again"
                    ),
                )
        outcomes: dict[str, tuple[SharedClass | None, str]] = {}
        matching = [ls for name, ls in self.nodes if _node_matches(name, ls, selector, required)]
        if matching:
            for labels in matching:
                served = [p for p in plugins if all(labels.get(k) == v for k, v in p.node_selector.items())]
                if not served:
                    outcomes.setdefault("-", (None, "a node no sharing plugin config serves"))
                for p in served:
                    for key in [labels[p.label]] if p.label in labels else list(p.defaults):
                        sc = p.outcome(key, resource)
                        outcomes.setdefault(_k(sc), (sc, f"{p.describe()} config {key!r} on its nodes"))
            how = f"the {count(len(matching), 'Node')} in the input it can run on"
        else:
            for p in plugins:
                applies = _selector_relation(selector, p.node_selector)
                if applies == "no":
                    continue
                if applies == "maybe":
                    outcomes.setdefault("-", (None, f"nodes outside {p.describe()}'s plugin DaemonSet"))
                for key in _keys_for(p, selector, required):
                    sc = p.outcome(key, resource)
                    what = f"config {key!r}" if key is not None else "no config (no default)"
                    outcomes.setdefault(_k(sc), (sc, f"{p.describe()} {what}"))
            how = "its nodeSelector/affinity and the plugin's configs"
        gr = vendors.classify(resource)
        if gr is not None and gr.shared:  # only nodes whose config renames it advertise <name>.shared
            outcomes.pop("-", None)
        if not outcomes:
            return Decision(None)
        if len(outcomes) == 1:
            sc, why = next(iter(outcomes.values()))
            return Decision(sc, why=f"{why} ({how})")
        options = "; ".join(
            f"{why} -> {'DeviceClass ' + sc.name if sc else 'exclusive GPUs'}"
            for sc, why in outcomes.values()
        )
        return Decision(
            None,
            manual=(
                f"{resource}: the device plugin shares GPUs per node and the nodes this pod can land on may use "
                f"different configs ({options}); pin the config with nodeSelector {plugins[0].label}: <config> (or "
                "--sharing), then migrate again"
            ),
        )

    def _platform(self, resource: str, pod_spec: Mapping[str, Any]) -> Decision:
        """GKE time-sharing selected by the pod's nodeSelector (``data/platforms.yaml``): up to N containers per
        GPU, as pods sharing a claim of a TimeSlicing class. MPS and partitions are decided elsewhere."""
        plat = platforms.gpu_sharing(pod_spec)
        vendor = vendors.for_resource(resource)
        if (
            plat is None
            or plat.strategy != "TimeSlicing"
            or vendor is None
            or resource != vendor.gpu_resource
            or vendor.unsupported("sharing") is not None
        ):
            return Decision(None)
        gke = platforms.facts()["gke"]
        clients = plat.clients
        if clients is None or not clients.isdigit() or int(clients) < 1:
            return Decision(
                None,
                manual=(
                    f"{resource}: {plat.describe()}: time-sharing without {gke['max_shared_clients']} as a whole "
                    "number, so how many containers shared one GPU is not known and the pods cannot be grouped "
                    "onto shared ResourceClaims; select the label as the node pool sets it, then migrate again"
                ),
            )
        n = int(clients)
        sc = self.platform_classes.get(n)
        if sc is None:
            base = gke["time_sharing"]["device_class"]
            sc = platform_class(vendor, plat.describe(), base, n, interval=self.interval)
            self.platform_classes[n] = sc
        return Decision(sc, why=f"{plat.describe()}: GKE time-sharing, up to {n} containers per GPU")

    def platform_class_objects(self, names: set[str]) -> list[SharedClass]:
        """The platform classes among ``names`` (DeviceClasses a workload's new objects use) not written yet."""
        out = [
            sc for sc in self.platform_classes.values() if sc.name in names and sc.name not in self.written
        ]
        self.written.update(sc.name for sc in out)
        return out


def platform_class(
    vendor: Vendor, describe: str, base: str, clients: int, *, interval: str = "Default"
) -> SharedClass:
    """The DeviceClass for a platform's time-sharing node pool (GKE ``time-sharing`` with up to ``clients``
    containers per GPU, ``data/platforms.yaml``): the vendor's TimeSlicing class for whole GPUs, groups of
    ``clients`` pods per shared claim."""
    device_class = vendor.sharing_class(f"{base}-{clients}", "TimeSlicing", interval=interval)
    assert device_class is not None  # asked only of a vendor that models sharing
    class_name = str(device_class["metadata"]["name"])
    warnings = [
        f"{describe}: up to {clients} containers shared one GPU; with DRA only pods that reference the same "
        f"ResourceClaim share it (DeviceClass {class_name} sets TimeSlicing): with --gpu-strategy claim-template "
        f"Deployments become groups of {clients} pods sharing one ResourceClaim, Jobs and StatefulSets of at most "
        f"{clients} pods share one; other workloads of several pods are manual items",
        f"{describe}: those labels are GKE's time-sharing node pool settings, served by GKE's own device plugin; "
        "the DRA node pool these pods move to must carry the labels, or remove them from the nodeSelector",
    ]
    return SharedClass(
        vendor.gpu_resource, "gke", device_class, warnings, clients, "TimeSlicing", "GKE time-sharing"
    )


def _k(sc: SharedClass | None) -> str:
    return sc.name if sc is not None else "-"


def _node_matches(
    name: str, labels: Mapping[str, str], selector: Mapping[str, str], required: NodeSelector | None
) -> bool:
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    return required is None or node_selector_matches(required, name, labels)


def _selector_relation(selector: Mapping[str, str], plugin_selector: Mapping[str, str]) -> str:
    """Does a pod with ``selector`` run on the plugin's nodes: yes, no or maybe."""
    if any(k in selector and selector[k] != v for k, v in plugin_selector.items()):
        return "no"
    if all(selector.get(k) == v for k, v in plugin_selector.items()):
        return "yes"
    return "maybe"


def _keys_for(
    p: PluginConfig, selector: Mapping[str, str], required: NodeSelector | None
) -> list[str | None]:
    """Config keys the nodes this pod may land on can use (None: a node with no config)."""
    if p.label in selector:
        return [selector[p.label]]
    if required is not None and required.terms:
        values: set[str | None] = set()
        for term in required.terms:
            exprs = [e for e in term.match_expressions if e.key == p.label]
            if not exprs:
                return [*p.defaults, *p.configs]  # this term leaves the label free
            for e in exprs:
                if e.operator == "In":
                    values |= set(e.values)
                elif e.operator == "DoesNotExist":
                    values |= set(p.defaults)
                else:
                    return [*p.defaults, *p.configs]
        return sorted(values, key=lambda v: (v is None, v or ""))
    return [*p.defaults, *p.configs]
