"""Build an allocator the way kube-scheduler would at a target version: gates → features, taint rules,
counter model, and the allocated state from every claim that already has an allocation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubedra.allocator.core import Allocator
from kubedra.allocator.requests import claim_ref
from kubedra.allocator.selectors import SelectorError, SelectorMatcher
from kubedra.allocator.state import AllocatedState, Features
from kubedra.allocator.taints import apply_taint_rules
from kubedra.errors import InputError
from kubedra.k8s import versions
from kubedra.k8s.featuregates import effective_gates, parse_feature_gates
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.k8s.versions import require_supported as parse_version
from kubedra.model.inventory import Inventory
from kubedra.model.objects import ResourceClaim

FILTER_TIMEOUT_SECONDS = 10.0  # configv1.DynamicResourcesFilterTimeoutDefault


@dataclass(frozen=True)
class EngineConfig:
    target_version: str
    gates: Mapping[str, bool]
    features: Features
    filter_timeout_seconds: float = FILTER_TIMEOUT_SECONDS  # DynamicResourcesArgs.filterTimeout

    @property
    def pool_counters(self) -> bool:
        """1.35+ keeps counter sets pool-wide in counters-only slices; 1.33/1.34 in the device's slice."""
        return versions.holds("dra.countersOnlySlices", parse_version(self.target_version))

    @property
    def taint_rules(self) -> bool:
        """Whether kube-scheduler reads DeviceTaintRules: every gate data/versions.yaml ``apis.
        deviceTaintRuleGates`` names for the release is on (DRADeviceTaints alone at 1.34, which has no
        DRADeviceTaintRules gate; both from 1.35)."""
        needed = versions.api("deviceTaintRuleGates", parse_version(self.target_version)) or []
        return bool(needed) and all(self.gates.get(g) for g in needed)

    @property
    def filter_timeout(self) -> float | None:
        """Seconds kube-scheduler's DynamicResources Filter gives the allocator per node: DynamicResourcesArgs
        ``filterTimeout`` defaults to 10 s while DRASchedulerFilterTimeout is on (none when off)."""
        return self.filter_timeout_seconds if self.gates.get("DRASchedulerFilterTimeout") else None

    @property
    def extended_resources(self) -> bool:
        return bool(self.gates.get("DRAExtendedResource"))


def engine_config(
    target_version: str = DEFAULT_TARGET, feature_gates: str | Mapping[str, bool] | None = None
) -> EngineConfig:
    v = str(parse_version(target_version))
    overrides = (
        parse_feature_gates(feature_gates)
        if isinstance(feature_gates, str) or feature_gates is None
        else dict(feature_gates)
    )
    gates = effective_gates(v, overrides)
    return EngineConfig(v, gates, Features.from_gates(gates))


def allocator_for(inv: Inventory, cfg: EngineConfig, matcher: SelectorMatcher | None = None) -> Allocator:
    slices = (
        apply_taint_rules(inv.slices, inv.taint_rules, release=cfg.target_version)
        if cfg.taint_rules
        else inv.slices
    )
    return Allocator(
        cfg.features,
        inv.classes,
        slices,
        AllocatedState.from_claims(inv.claims),
        selector_matcher=matcher,
        pool_counters=cfg.pool_counters,
        target_version=cfg.target_version,
    )


def check_class_selectors(inv: Inventory, alloc: Allocator) -> None:
    """A DeviceClass whose CEL selector does not compile is bad input, not an allocation failure: the
    apiserver refuses to create it. InputError (one line) naming the class and the expression."""
    for cls in inv.classes:
        for i, expression in enumerate(cls.selectors):
            try:
                alloc.matcher.compile(i, expression)
            except SelectorError as e:
                why = next((ln.strip() for ln in e.message.splitlines() if ln.strip()), "does not compile")
                raise InputError(
                    f"DeviceClass {cls.name}: spec.selectors[{i}].cel.expression {expression!r} does not "
                    f"compile: {why}"
                ) from None


def check_classes_given(inv: Inventory, claims: list[ResourceClaim]) -> None:
    """Every DeviceClass the ``claims`` request is among the inputs. Read from files, a class that is not
    there was not given, which says nothing of the cluster: the allocator's 'could not retrieve device class'
    would answer 'no node can' (exit 1) from what was not read. InputError (one line, exit 2) naming the class
    and the claim and request that use it."""
    given = {c.name for c in inv.classes}
    for claim in claims:
        for r in claim.spec.requests:
            wanted = [(r.name, r.exactly.device_class_name)] if r.exactly is not None else []
            wanted += [(f"{r.name}/{s.name}", s.device_class_name) for s in r.first_available]
            for request, name in wanted:
                if name and name not in given:
                    raise InputError(
                        f"DeviceClass {name} (claim {claim_ref(claim)}, request {request}) is not among the "
                        f"inputs: add it (kubectl get deviceclass {name} -o yaml)"
                    )
