"""What the OpenAPI schemas miss: the apiserver's own validation rules for DRA objects and pod claims.

Source: kubernetes ``pkg/apis/resource/validation/validation.go`` (read at a 1.35/1.36 revision) and the
constants in k8s.io/api ``resource/v1/types.go`` (``ResourceSliceMaxDevices`` and the other limits): name formats, list limits, enums, one-of rules,
quantities, and CEL selectors compiled in the target release's environment with its cost limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubedra.k8s.dnsnames import dns_label, dns_subdomain
from kubedra.k8s.featuregates import gate_info
from kubedra.k8s.versions import Version, holds, since
from kubedra.validate.requestpolicy import request_policy_issues

Path = tuple[str | int, ...]

# resource/v1/types.go
MAX_REQUESTS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_SELECTORS = 32
MAX_FIRST_AVAILABLE = 8
MAX_TOLERATIONS = 16
MAX_DEVICES = 128
MAX_DEVICES_ADVANCED = 64
MAX_ATTRS_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48
MAX_ATTRIBUTE_LENGTH = 64
MAX_TAINTS = 16
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_BINDING_CONDITIONS = 4
MAX_DRIVER_NAME = 63
MAX_POOL_NAME = 253
MAX_ID_LENGTH = 32
MAX_DOMAIN_LENGTH = 63
MAX_OPAQUE_PARAMETERS = 10240

ALLOCATION_MODES = ("ExactCount", "All")
TOLERATION_OPERATORS = ("Exists", "Equal")
TOLERATION_EFFECTS = ("", "None", "NoSchedule", "NoExecute")
TAINT_EFFECTS_135 = ("None", "NoSchedule", "NoExecute")

_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_QNAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


PUBLISHED_RULE = "dra.selector-unpublished"  # the audit rule of the same check


@dataclass(frozen=True)
class Issue:
    path: Path
    message: str
    warning: bool = False
    # set where the check goes beyond what the apiserver validates (a selector against what the driver
    # publishes): the apiserver accepts such an object, and the claim can still never be allocated
    rule: str = ""


def driver_name(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return "driver name is required"
    if len(v) > MAX_DRIVER_NAME:
        return f"driver name must be no more than {MAX_DRIVER_NAME} characters, got {len(v)}"
    err = dns_subdomain(v.lower())
    return f"driver name {v!r}: {err}" if err else None


def qualified_name(v: Any, *, full: bool = False) -> str | None:
    """DRA QualifiedName (``<C identifier>`` or ``<domain>/<C identifier>``); FullyQualifiedName needs the domain."""
    if not isinstance(v, str) or not v:
        return "must be a non-empty name"
    domain, sep, ident = v.rpartition("/")
    if full and not sep:
        return f"{v!r} must be fully qualified (<domain>/<name>)"
    if sep:
        if len(domain) > MAX_DOMAIN_LENGTH:
            return f"domain {domain!r} must be no more than {MAX_DOMAIN_LENGTH} characters"
        err = dns_subdomain(domain.lower())
        if err:
            return f"domain of {v!r}: {err}"
    if len(ident) > MAX_ID_LENGTH:
        return f"name {ident!r} must be no more than {MAX_ID_LENGTH} characters"
    if not _C_IDENTIFIER.match(ident):
        return f"name {ident!r} must be a C identifier (letters, digits, '_', not starting with a digit)"
    return None


def label_key(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return "must be a non-empty key"
    prefix, sep, name = v.rpartition("/")
    if sep:
        err = dns_subdomain(prefix)
        if err:
            return f"prefix of {v!r}: {err}"
    if len(name) > 63 or not _QNAME_PART.match(name):
        return f"{v!r} is not a qualified name (alphanumerics, '-', '_', '.', at most 63 characters)"
    return None


def label_value(v: Any) -> str | None:
    if not isinstance(v, str):
        return "must be a string"
    if len(v) > 63 or not _LABEL_VALUE.match(v):
        return f"{v!r} is not a valid label value"
    return None


def extended_resource_name(v: Any) -> str | None:
    if not isinstance(v, str) or "/" not in v:
        return f"{v!r} must be an extended resource name (<domain>/<name>)"
    domain = v.split("/", 1)[0]
    native = domain == "kubernetes.io" or domain.endswith(".kubernetes.io")
    if native and not v.startswith("deviceclass.resource.kubernetes.io/"):
        return f"{v!r} is in the kubernetes.io namespace, which is reserved for native resources"
    if label_key(v) is not None or label_key("requests." + v) is not None:
        return f"{v!r} is not a valid extended resource name"
    return None


def _seq(v: Any) -> list[Any]:
    return list(v) if isinstance(v, Sequence) and not isinstance(v, str) else []


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


class RuleChecker:
    """The checks for one object; collects :class:`Issue` s."""

    def __init__(
        self,
        minor: int,
        quantity: Callable[[Any], str | None],
        cel: Callable[[str], str | None] | None,
        published: Callable[[str], list[tuple[str, bool]]] | None = None,
    ) -> None:
        self.minor = minor
        self.release = Version(1, minor)
        self.quantity = quantity
        self.cel = cel
        self.published = published
        self.issues: list[Issue] = []

    def err(self, path: Path, message: str) -> None:
        self.issues.append(Issue(path, message))

    def warn(self, path: Path, message: str) -> None:
        self.issues.append(Issue(path, message, True))

    def check_name(self, path: Path, value: Any, fn: Callable[[Any], str | None]) -> None:
        e = fn(value)
        if e:
            self.err(path, e)

    def limit(self, path: Path, items: list[Any], n: int, what: str) -> None:
        if len(items) > n:
            self.err(path, f"too many {what}: {len(items)}, the limit is {n}")

    # --- entry point ----------------------------------------------------------------------------
    def check(self, obj: Mapping[str, Any]) -> list[Issue]:
        kind = obj.get("kind")
        api = str(obj.get("apiVersion", ""))
        if api.startswith("resource.k8s.io/"):
            if kind == "ResourceClaim":
                self.claim_spec(("spec",), obj.get("spec"))
            elif kind == "ResourceClaimTemplate":
                self.claim_spec(("spec", "spec"), _map(obj.get("spec")).get("spec"))
            elif kind == "DeviceClass":
                self.device_class(obj)
            elif kind == "ResourceSlice":
                self.slice(obj)
            elif kind == "DeviceTaintRule":
                self.taint(("spec", "taint"), _map(obj.get("spec")).get("taint"))
        return self.issues

    # --- claims ---------------------------------------------------------------------------------
    def claim_spec(self, base: Path, spec: Any) -> None:  # noqa: C901 - validation.go's rules for a claim spec, one branch per rule
        devices = _map(_map(spec).get("devices"))
        p: Path = (*base, "devices")
        requests = _seq(devices.get("requests"))
        self.limit((*p, "requests"), requests, MAX_REQUESTS, "requests")
        names: dict[str, list[str]] = {}
        for i, req in enumerate(requests):
            rp: Path = (*p, "requests", i)
            req = _map(req)
            name = req.get("name")
            self.check_name((*rp, "name"), name, dns_label)
            if isinstance(name, str):
                if name in names:
                    self.err((*rp, "name"), f"duplicate request name {name!r}")
                names[name] = []
            exactly, first = req.get("exactly"), req.get("firstAvailable")
            if exactly is None and first is None:
                self.err(rp, "exactly one of exactly or firstAvailable is required")
            elif exactly is not None and first is not None:
                self.err(rp, "exactly one of exactly or firstAvailable may be set, not both")
            if exactly is not None:
                self.exact((*rp, "exactly"), _map(exactly), subrequest=False)
            if first is not None:
                subs = _seq(first)
                if not subs:
                    self.err((*rp, "firstAvailable"), "must have at least one entry")
                self.limit((*rp, "firstAvailable"), subs, MAX_FIRST_AVAILABLE, "subrequests")
                seen: set[str] = set()
                for j, sub in enumerate(subs):
                    sp: Path = (*rp, "firstAvailable", j)
                    sub = _map(sub)
                    self.check_name((*sp, "name"), sub.get("name"), dns_label)
                    sname = sub.get("name")
                    if isinstance(sname, str):
                        if sname in seen:
                            self.err((*sp, "name"), f"duplicate subrequest name {sname!r}")
                        seen.add(sname)
                        if isinstance(name, str):
                            names[name].append(sname)
                    self.exact(sp, sub, subrequest=True)
        refs = set(names) | {f"{r}/{s}" for r, subs in names.items() for s in subs}
        constraints = _seq(devices.get("constraints"))
        self.limit((*p, "constraints"), constraints, MAX_CONSTRAINTS, "constraints")
        for i, c in enumerate(constraints):
            cp: Path = (*p, "constraints", i)
            c = _map(c)
            self._refs((*cp, "requests"), c.get("requests"), refs)
            # not "exactly one" (data/versions.yaml dra.distinctAttributeAlwaysChecked)
            attrs = [k for k in ("matchAttribute", "distinctAttribute") if c.get(k) is not None]
            for k in attrs if holds("dra.distinctAttributeAlwaysChecked", self.release) else attrs[:1]:
                self.check_name((*cp, k), c.get(k), lambda v: qualified_name(v, full=True))
            if not attrs and (gate_info("DRAConsumableCapacity", self.release) or {}).get("default"):
                self.err(cp, "one of matchAttribute or distinctAttribute is required")
            elif not attrs:  # DRAConsumableCapacity off: the apiserver asks for matchAttribute
                self.err((*cp, "matchAttribute"), "matchAttribute is required")
        configs = _seq(devices.get("config"))
        self.limit((*p, "config"), configs, MAX_CONFIGS, "config entries")
        for i, c in enumerate(configs):
            cp = (*p, "config", i)
            c = _map(c)
            self._refs((*cp, "requests"), c.get("requests"), refs)
            self.opaque((*cp, "opaque"), c.get("opaque"))

    def _refs(self, path: Path, value: Any, refs: set[str]) -> None:
        for j, r in enumerate(_seq(value)):
            if r not in refs:
                self.err((*path, j), f"{r!r} does not name a request (or request/subrequest) of this claim")

    def exact(self, p: Path, ex: Mapping[str, Any], *, subrequest: bool) -> None:
        self.check_name((*p, "deviceClassName"), ex.get("deviceClassName"), dns_subdomain)
        selectors = _seq(ex.get("selectors"))
        self.limit((*p, "selectors"), selectors, MAX_SELECTORS, "selectors")
        for i, s in enumerate(selectors):
            self.selector((*p, "selectors", i), s)
        mode = ex.get("allocationMode") or "ExactCount"
        count = ex.get("count")
        if mode not in ALLOCATION_MODES:
            self.err((*p, "allocationMode"), f"must be one of ExactCount, All, got {mode!r}")
        elif mode == "ExactCount":
            if isinstance(count, int) and not isinstance(count, bool) and count < 0:
                self.err((*p, "count"), f"must be greater than zero, got {count}")
            elif count == 0 and not isinstance(count, bool):
                # pkg/apis/resource/v1/defaults.go SetDefaults_ExactDeviceRequest and SetDefaults_DeviceSubRequest:
                # ExactCount with count 0 -> 1, for a request and for a firstAvailable subrequest alike
                what = "this subrequest, when chosen," if subrequest else "this request"
                self.warn(
                    (*p, "count"),
                    f"count: 0 is defaulted to 1 by the apiserver: {what} allocates one device; to ask for none, "
                    + ("remove the subrequest" if subrequest else "remove the request (and the claim)"),
                )
        elif mode == "All" and count not in (None, 0):
            self.err((*p, "count"), f"must not be set when allocationMode is All, got {count}")
        tolerations = _seq(ex.get("tolerations"))
        self.limit((*p, "tolerations"), tolerations, MAX_TOLERATIONS, "tolerations")
        for i, t in enumerate(tolerations):
            self.toleration((*p, "tolerations", i), _map(t))
        cap = _map(_map(ex.get("capacity")).get("requests"))
        for k, v in cap.items():
            self.check_name((*p, "capacity", "requests", k), k, qualified_name)
            e = self.quantity(v)
            if e:
                self.err((*p, "capacity", "requests", k), e)
        if _seq(ex.get("derivedAttributes")):
            # k8s.io/kubernetes v1.37.2 pkg/api/resourceclaimspec/util.go dropDisabledDRADerivedAttributesFields: a
            # new claim's (or template's) derivedAttributes are cleared while the gate is off
            gate = gate_info("DRADerivedAttributes", self.release)  # data/feature-gates.yaml
            if gate is not None and not gate.get("default"):
                self.warn(
                    (*p, "derivedAttributes"),
                    f"DRADerivedAttributes is {gate.get('stage', 'alpha')} and off by default in 1.{self.minor}: "
                    "the apiserver drops derivedAttributes unless the feature gate is enabled",
                )

    def selector(self, p: Path, s: Any) -> None:
        cel = _map(s).get("cel")
        if not isinstance(cel, Mapping):
            self.err((*p, "cel"), "cel is required (a selector must be a CEL expression)")
            return
        expr = cel.get("expression")
        if not isinstance(expr, str) or not expr.strip():
            self.err((*p, "cel", "expression"), "expression is required")
            return
        if self.cel is not None:
            e = self.cel(expr)
            if e:
                self.err((*p, "cel", "expression"), e)
                return
        if self.published is not None:
            for message, warning in self.published(expr):
                self.issues.append(Issue((*p, "cel", "expression"), message, warning, rule=PUBLISHED_RULE))

    def toleration(self, p: Path, t: Mapping[str, Any]) -> None:
        op = t.get("operator") or "Equal"
        key = t.get("key") or ""
        if op not in TOLERATION_OPERATORS:
            self.err((*p, "operator"), f"must be Exists or Equal, got {op!r}")
        if key:
            self.check_name((*p, "key"), key, label_key)
        elif op != "Exists":
            self.err((*p, "operator"), "must be Exists when key is empty")
        if op == "Exists" and t.get("value"):
            self.err((*p, "value"), "must be empty when operator is Exists")
        elif t.get("value"):
            self.check_name((*p, "value"), t.get("value"), label_value)
        effect = t.get("effect") or ""
        if effect not in TOLERATION_EFFECTS or (
            effect == "None" and not holds("dra.taintEffectNone", self.release)
        ):
            self.err((*p, "effect"), f"unsupported effect {effect!r}")

    def opaque(self, p: Path, o: Any) -> None:
        if o is None:
            self.err(p, "opaque is required")
            return
        o = _map(o)
        self.check_name((*p, "driver"), o.get("driver"), driver_name)
        params = o.get("parameters")
        if not isinstance(params, Mapping):
            self.err((*p, "parameters"), "must be a JSON object")
        elif len(json.dumps(params, separators=(",", ":"))) > MAX_OPAQUE_PARAMETERS:
            self.err((*p, "parameters"), f"must be no more than {MAX_OPAQUE_PARAMETERS} bytes")

    # --- DeviceClass ----------------------------------------------------------------------------
    def device_class(self, obj: Mapping[str, Any]) -> None:
        spec = _map(obj.get("spec"))
        self.check_name(("metadata", "name"), _map(obj.get("metadata")).get("name"), dns_subdomain)
        selectors = _seq(spec.get("selectors"))
        self.limit(("spec", "selectors"), selectors, MAX_SELECTORS, "selectors")
        for i, s in enumerate(selectors):
            self.selector(("spec", "selectors", i), s)
        configs = _seq(spec.get("config"))
        self.limit(("spec", "config"), configs, MAX_CONFIGS, "config entries")
        for i, c in enumerate(configs):
            self.opaque(("spec", "config", i, "opaque"), _map(c).get("opaque"))
        ext = spec.get("extendedResourceName")
        if ext is not None:
            # with DRAExtendedResource off the apiserver drops the field before this (kubedra.validate.dropped)
            self.check_name(("spec", "extendedResourceName"), ext, extended_resource_name)

    # --- DeviceTaintRule / taints ---------------------------------------------------------------
    def taint(self, p: Path, t: Any) -> None:
        if t is None:
            self.err(p, "taint is required")
            return
        t = _map(t)
        self.check_name((*p, "key"), t.get("key"), label_key)
        if t.get("value"):
            self.check_name((*p, "value"), t.get("value"), label_value)
        effect = t.get("effect")
        allowed = TAINT_EFFECTS_135 if holds("dra.taintEffectNone", self.release) else TAINT_EFFECTS_135[1:]
        if effect not in allowed:
            self.err((*p, "effect"), f"must be one of {', '.join(allowed)}, got {effect!r}")

    # --- ResourceSlice --------------------------------------------------------------------------
    def slice(self, obj: Mapping[str, Any]) -> None:  # noqa: C901 - validation.go's rules for a ResourceSlice, one branch per rule
        spec = _map(obj.get("spec"))
        sp: Path = ("spec",)
        self.check_name((*sp, "driver"), spec.get("driver"), driver_name)
        pool = _map(spec.get("pool"))
        pname = pool.get("name")
        if not isinstance(pname, str) or not pname:
            self.err((*sp, "pool", "name"), "pool name is required")
        elif len(pname) > MAX_POOL_NAME:
            self.err((*sp, "pool", "name"), f"must be no more than {MAX_POOL_NAME} characters")
        else:
            for part in pname.split("/"):
                e = dns_subdomain(part)
                if e:
                    self.err((*sp, "pool", "name"), f"pool name {pname!r}: {e}")
                    break
        gen = pool.get("generation", 0)
        if isinstance(gen, int) and gen < 0:
            self.err((*sp, "pool", "generation"), "must be greater than or equal to 0")
        count = pool.get("resourceSliceCount", 0)
        if not isinstance(count, int) or count <= 0:
            self.err((*sp, "pool", "resourceSliceCount"), f"must be greater than zero, got {count!r}")
        selection = [
            k for k in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection") if spec.get(k)
        ]
        devices = _seq(spec.get("devices"))
        counters = _seq(spec.get("sharedCounters"))
        if len(selection) > 1:
            self.err(
                sp,
                f"exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection; got {selection}",
            )
        elif not selection:  # counters-only slices too (checked against a 1.37 apiserver)
            self.err(
                sp, "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection is required"
            )
        for k in ("allNodes", "perDeviceNodeSelection"):
            if k in spec and spec[k] is not True and spec[k] is not None:
                self.err((*sp, k), "must be true when set")
        terms = _seq(_map(spec.get("nodeSelector")).get("nodeSelectorTerms"))
        if spec.get("nodeSelector") and len(terms) != 1:
            self.err((*sp, "nodeSelector", "nodeSelectorTerms"), "must have exactly one term")
        if devices and counters and holds("dra.countersOnlySlices", self.release):
            self.err(sp, "only one of devices and sharedCounters can be set in a ResourceSlice (1.35+)")
        advanced = any(_map(d).get("taints") or _map(d).get("consumesCounters") for d in devices)
        limit = MAX_DEVICES_ADVANCED if advanced else MAX_DEVICES
        if len(devices) > limit:
            why = " (devices with taints or consumesCounters)" if advanced else ""
            self.err((*sp, "devices"), f"too many devices: {len(devices)}, the limit is {limit}{why}")
        seen: set[str] = set()
        for i, d in enumerate(devices):
            self.device((*sp, "devices", i), _map(d), seen, bool(spec.get("perDeviceNodeSelection")))
        self.limit((*sp, "sharedCounters"), counters, MAX_COUNTER_SETS, "counter sets")
        set_names: set[str] = set()
        for i, cs in enumerate(counters):
            cp: Path = (*sp, "sharedCounters", i)
            cs = _map(cs)
            self.check_name((*cp, "name"), cs.get("name"), dns_label)
            if cs.get("name") in set_names:
                self.err((*cp, "name"), f"duplicate counter set {cs.get('name')!r}")
            set_names.add(str(cs.get("name")))
            cmap = _map(cs.get("counters"))
            if not cmap:
                self.err((*cp, "counters"), "must have at least one counter")
            if len(cmap) > MAX_COUNTERS_PER_SET:
                self.err(
                    (*cp, "counters"), f"too many counters: {len(cmap)}, the limit is {MAX_COUNTERS_PER_SET}"
                )
            for k, v in cmap.items():
                self.check_name((*cp, "counters", k), k, dns_label)
                if e := self.quantity(_map(v).get("value")):
                    self.err((*cp, "counters", k, "value"), e)

    def device(self, p: Path, d: Mapping[str, Any], seen: set[str], per_device: bool) -> None:
        """validation.go's rules for one device of a slice, a helper per part with rules of its own."""
        name = d.get("name")
        self.check_name((*p, "name"), name, dns_label)
        if isinstance(name, str):
            if name in seen:
                self.err((*p, "name"), f"duplicate device name {name!r}")
            seen.add(name)
        attrs = _map(d.get("attributes"))
        caps = _map(d.get("capacity"))
        if len(attrs) + len(caps) > MAX_ATTRS_AND_CAPACITIES:
            self.err(p, f"too many attributes and capacities: {len(attrs) + len(caps)}, the limit is 32")
        self._attributes(p, attrs)
        self._capacities(p, caps, bool(d.get("allowMultipleAllocations")))
        self._consumes_counters(p, _seq(d.get("consumesCounters")))
        taints = _seq(d.get("taints"))
        self.limit((*p, "taints"), taints, MAX_TAINTS, "taints")
        for i, t in enumerate(taints):
            self.taint((*p, "taints", i), t)
        self._device_nodes(p, d, per_device)
        for k in ("bindingConditions", "bindingFailureConditions"):
            if len(_seq(d.get(k))) > MAX_BINDING_CONDITIONS:
                self.err((*p, k), f"too many entries, the limit is {MAX_BINDING_CONDITIONS}")

    def _attributes(self, p: Path, attrs: Mapping[str, Any]) -> None:
        """Each attribute: a qualified name, exactly one typed value; all values within MAX_ATTRIBUTE_VALUES."""
        values = 0
        for k, v in attrs.items():
            ap: Path = (*p, "attributes", k)
            self.check_name(ap, k, qualified_name)
            v = _map(v)
            set_fields = [
                f
                for f in ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")
                if f in v
            ]
            if len(set_fields) != 1:
                self.err(ap, "exactly one of int, bool, string, version (or their list forms) is required")
                continue
            f = set_fields[0]
            val = v[f]
            items = _seq(val) if f.endswith("s") else [val]
            values += len(items)
            if f.endswith("s") and not holds("dra.listTypeAttributes", self.release):
                self.err(
                    (*ap, f),
                    f"list attributes need {since('dra.listTypeAttributes')}+ (DRAListTypeAttributes), "
                    f"target is 1.{self.minor}",
                )
            self._attribute_items((*ap, f), f, items)
        if values > MAX_ATTRIBUTE_VALUES:
            limit = MAX_ATTRIBUTE_VALUES
            self.err((*p, "attributes"), f"too many attribute values: {values}, the limit is {limit}")

    def _attribute_items(self, p: Path, f: str, items: Sequence[Any]) -> None:
        for item in items:
            if f.startswith("string") and isinstance(item, str) and len(item) > MAX_ATTRIBUTE_LENGTH:
                self.err(p, f"must be no more than {MAX_ATTRIBUTE_LENGTH} characters")
            if f.startswith("version") and (
                not isinstance(item, str) or len(item) > MAX_ATTRIBUTE_LENGTH or not _SEMVER.match(item)
            ):
                self.err(p, f"{item!r} is not a semantic version (semver 2.0.0, e.g. 575.57.8)")

    def _capacities(self, p: Path, caps: Mapping[str, Any], multiple_allocations: bool) -> None:
        for k, v in caps.items():
            cp: Path = (*p, "capacity", k)
            self.check_name(cp, k, qualified_name)
            if e := self.quantity(_map(v).get("value")):
                self.err((*cp, "value"), e)
            policy = _map(v).get("requestPolicy")
            if policy is not None and not multiple_allocations:
                self.err((*cp, "requestPolicy"), "only allowed when allowMultipleAllocations is true")
            elif policy is not None:
                found = request_policy_issues(
                    (*cp, "requestPolicy"), _map(v).get("value"), _map(policy), self.release, self.quantity
                )
                self.issues.extend(Issue(path, message) for path, message in found)

    def _consumes_counters(self, p: Path, consumes: Sequence[Any]) -> None:
        if len(consumes) > MAX_CONSUMPTIONS_PER_DEVICE:
            self.err((*p, "consumesCounters"), f"too many entries: {len(consumes)}, the limit is 2")
        for i, c in enumerate(consumes):
            c = _map(c)
            cp: Path = (*p, "consumesCounters", i)
            self.check_name((*cp, "counterSet"), c.get("counterSet"), dns_label)
            cmap = _map(c.get("counters"))
            if len(cmap) > MAX_COUNTERS_PER_CONSUMPTION:
                self.err((*cp, "counters"), f"too many counters: {len(cmap)}, the limit is 32")
            for k, v in cmap.items():
                if e := self.quantity(_map(v).get("value")):
                    self.err((*cp, "counters", k, "value"), e)

    def _device_nodes(self, p: Path, d: Mapping[str, Any], per_device: bool) -> None:
        node_fields = [k for k in ("nodeName", "nodeSelector", "allNodes") if d.get(k)]
        if per_device and len(node_fields) != 1:
            self.err(
                p,
                "with perDeviceNodeSelection each device needs exactly one of nodeName, nodeSelector, allNodes",
            )
        elif not per_device and node_fields:
            self.err((*p, node_fields[0]), "only allowed when spec.perDeviceNodeSelection is true")


def pod_claim_issues(spec_path: Path, pod_spec: Mapping[str, Any]) -> list[Issue]:
    """The apiserver's pod rules for DRA: claim entries and the containers' references to them."""
    issues: list[Issue] = []
    claims = _seq(pod_spec.get("resourceClaims"))
    names: set[str] = set()
    for i, c in enumerate(claims):
        c = _map(c)
        p: Path = (*spec_path, "resourceClaims", i)
        e = dns_label(c.get("name"))
        if e:
            issues.append(Issue((*p, "name"), e))
        name = c.get("name")
        if not isinstance(name, str):  # a mapping or list as a name (dns_label said so): nothing to look up
            name = None
        elif name in names:
            issues.append(Issue((*p, "name"), f"duplicate claim name {name!r}"))
        else:
            names.add(name)
        src = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if c.get(k)]
        if len(src) != 1:
            issues.append(
                Issue(p, "exactly one of resourceClaimName or resourceClaimTemplateName is required")
            )
    for fld in ("initContainers", "containers", "ephemeralContainers"):
        for i, ctr in enumerate(_seq(pod_spec.get(fld))):
            for j, ref in enumerate(_seq(_map(_map(ctr).get("resources")).get("claims"))):
                ref = _map(ref)
                if not isinstance(ref.get("name"), str) or ref.get("name") not in names:
                    issues.append(
                        Issue(
                            (*spec_path, fld, i, "resources", "claims", j, "name"),
                            f"{ref.get('name')!r} does not name an entry of spec.resourceClaims",
                        )
                    )
    return issues
