"""Random but valid allocation scenarios for the differential test, as hypothesis strategies.

A scenario is the oracle's input document (``kubedra.testing.oracle.scenario``): one node, DeviceClasses,
ResourceSlices, the claims to allocate together, what other claims already use, DeviceTaintRules and the
allocator features. Every object is one the 1.37 API server accepts (``pkg/apis/resource/validation``), and
is written the way the API server stores it (defaults such as ``allocationMode: ExactCount``, ``count: 1``
and toleration ``operator: Equal`` are spelled out), so kubedra (which reads stored objects) and the oracle
(which applies the same defaults) see the same input.

What varies, and why (each item is a path through upstream's allocator):

- drivers ``driver-a``/``driver-b``; pools per driver with one or several slices, generations (older ones
  must be ignored), an incomplete pool (fewer slices than ``resourceSliceCount``), a pool with a duplicate
  device name (invalid), pools for this node (``nodeName``), for another node, ``allNodes``,
  ``nodeSelector`` (matching or not) and ``perDeviceNodeSelection``;
- devices with int/bool/string/version attributes under the driver's domain and under ``example.com``
  (some missing, so that CEL hits "no such key"), capacities, taints, binding conditions,
  ``allowMultipleAllocations`` with request policies (range/step, valid values, fractional);
- the 1.35+ counter layout: a counters-only slice per pool, devices with ``consumesCounters``;
- classes and requests with CEL selectors from a small grammar of valid expressions (==, !=, <, in, has(),
  quantity compareTo/isGreaterThan, semver, startsWith, map membership, &&, ||, !), and the families of
  Optional chaining (``.?x``, ``[?'x']``, ``orValue``, ``value()``) under every size-dependent
  string function, ``type()``, quantities in every internal representation (``isInteger``/``asInteger``,
  ``add``/``sub``, ``==``; a ``units`` capacity written in each), ``string()`` of a quantity (a compile
  error upstream), RE2 ``find``/``findAll``; capacity requests under every gate set;
- claims with ExactCount/All, firstAvailable, matchAttribute/distinctAttribute constraints, tolerations,
  capacity requests, admin access, opaque config for all or some requests, derived attributes (1.37 alpha:
  expressions that compile or not, succeed or fail per device, override a static name) that constraints use;
- devices already allocated, shared (shareID) and consumed capacity; DeviceTaintRules;
- a second driver's channels (like NVIDIA's ComputeDomain channels) in pools named like the GPUs' pools;
- features that pick each of upstream's stable, incubating and experimental implementations about a third
  of the time (:func:`feature_set`; incubating half the time with a release's defaults).

Speed: hypothesis draws one 128-bit *gene* per object (device, request, claim, ...) and the object is
decoded from it (:class:`Genes`), a few dozen draws per scenario instead of hundreds; a gene of zeros
decodes to the simplest object. Minimal failing scenarios come from :mod:`minimize`, which shrinks the
JSON document itself.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from kubedra.testing.oracle import DEFAULT_FEATURES

T = TypeVar("T")
Draw = Callable[..., Any]
Doc = dict[str, Any]

RESOURCE_API = "resource.k8s.io/v1"
NODE_NAME = "node-1"
OTHER_NODE = "node-2"
DRIVERS = ("driver-a", "driver-b")
SHARED_DOMAIN = "example.com"
MODELS = ("a100", "h100", "l4")
VERSIONS = ("1.0.0", "1.2.3", "2.0.0-rc.1", "2.0.0", "10.1.0")
# A device's version may carry build metadata: equal to 1.2.3 for a constraint from v0.38 (semver's Equals), not
# through v0.37 (the texts are compared; allocator.attributeValuesTyped in data/versions.yaml).
DEVICE_VERSIONS = (*VERSIONS, "1.2.3+build.7")
MEMORY = ("8Gi", "16Gi", "40Gi", "80Gi")
RACKS = ("r1", "r2")
# Quantities in every representation apimachinery has: int64Amount with scale 0, a positive
# or a negative scale, inf.Dec (19 digits, a fraction with a binary suffix, large binary exponents).
QUANTITY_TEXTS = (
    "2",
    "8",
    "2000m",
    "1500m",
    "500m",
    "1.0",
    "0.5",
    "1.5Gi",
    "0.5Gi",
    "1k",
    "1e3",
    "1e-3",
    "1Ti",
    "1Pi",
    "100000Gi",
    "123456789012345678",
    "1234567890123456789",
    "100000000000000000000000000011",
    "100000000000000000000000000019",
)
# Quantities past int64 and past 29 significant digits, where apimachinery v0.38 differs from v0.37
# (quantity.nineteenDigitInt64 in data/versions.yaml): 19 digits within int64 are an int64Amount at 1.38, 30 digits
# parse rounded to 29, and Add/Sub round an operand more than 29 orders of magnitude finer than the other. A shared
# device's ``units`` capacity, the requests for it and what allocated claims consume of it are drawn from these in
# a few scenarios (:func:`_big_quantities`); each pool is small so that the combinations that tell the releases
# apart come up: 1e39 consumed + 99999999999 requested + 1n being allocated against 1e39 + 1e11 fits at 1.37
# only; 100000000000000000000000000019 requested of 100000000000000000000000000011 fits at 1.38 only.
BIG_CAPACITIES = (
    "100000000000000000000000000011",
    "10000000000000000000000000001e11",
    "1e39",
    "9223372036854775807",
    "1e21",
)
BIG_REQUESTS = ("1n", "99999999999", "1e39", "100000000000000000000000000019", "1234567890123456789", "1e10")
BIG_CONSUMED = ("1e39", "1n", "1e21", "9223372036854775807")
# Partitionable devices' counters past int64 and 29 orders of magnitude apart (:func:`_big_counters`): 1.38's
# Quantity.Sub and Add round the finer operand (boundScaleGap), so 1e40 less an allocated 1 no longer holds
# (1e40 - 1e11) + 1, and 1e39 + (1e11 - 1) + 1n passes 1e39 + 1e11 there only.
BIG_COUNTERS = ("1e40", "10000000000000000000000000001e11", "1e21")
BIG_COUNTER_USES = ("1", "1n", "99999999999999999999999999999e11", "1e39", "99999999999")
STRING_FUNCTIONS = ("contains", "startsWith", "endsWith", "matches")
REGEXES = ("[0-9]+", "^h", "a.", "(a|h)1", "x*", "^(a+)+$", "4$")
TAINT_KEYS = ("example.com/broken", "example.com/maintenance")
CONSTRAINT_ATTRIBUTES = (
    f"{SHARED_DOMAIN}/numa",
    "driver-a/model",
    "driver-a/index",
    f"{SHARED_DOMAIN}/rack",
    "driver-b/model",
    "driver-a/fw",
    "driver-a/fast",
    f"{SHARED_DOMAIN}/peers",
)
# Derived attributes (1.37 alpha DerivedAttributes): names a request derives (one a driver's own attribute, so
# the derived value overrides the static one for that request) and the expressions, some failing on devices
# without the attribute, one not compiling (a double).
DERIVED_NAMES = ("derived.example.com/key", f"{SHARED_DOMAIN}/numa", "driver-a/model")
DERIVED_EXPRESSIONS = (
    f'device.attributes["{SHARED_DOMAIN}"].numa',
    f'device.attributes["{SHARED_DOMAIN}"].?numa.orValue(9)',
    "device.attributes[device.driver].model",
    "device.attributes[device.driver].index % 2",
    f'device.attributes["{SHARED_DOMAIN}"].?rack.orValue("none")',
    f'device.attributes["{SHARED_DOMAIN}"].?peers.orValue([])',
    "device.driver",
    "device.attributes[device.driver].?fast.orValue(false)",
    "[device.attributes[device.driver].index, 1]",
    'device.attributes[device.driver].?fw.orValue(semver("0.0.1"))',
    "string(device.attributes[device.driver].index)",
    "1.5",
)
# Features kubedra's allocator knows (kubedra.allocator.Features.GO_NAMES). The 1.37-only ones the generator
# does not draw (CompatibilityGroups, OptionalNodeOperations) stay off, as in 1.37's defaults.
KUBEDRA_FEATURES = (
    "AdminAccess",
    "PrioritizedList",
    "PartitionableDevices",
    "DeviceTaints",
    "DeviceBindingAndStatus",
    "ConsumableCapacity",
    "ListTypeAttributes",
    "FractionalCapacityRange",
    "DerivedAttributes",
)
ALL_FEATURES = (*KUBEDRA_FEATURES, "CompatibilityGroups", "OptionalNodeOperations")
# The 1.36 allocator's structured.Features (k8s.io/dynamic-resource-allocation v0.36.3): no FractionalCapacityRange
# and no DerivedAttributes
FEATURES_136 = frozenset(KUBEDRA_FEATURES) - {"FractionalCapacityRange", "DerivedAttributes"}
# The 1.35 allocator's (k8s.io/dynamic-resource-allocation v0.35.10): no ListTypeAttributes either
FEATURES_135 = FEATURES_136 - {"ListTypeAttributes"}

GENE = st.binary(min_size=16, max_size=16).map(lambda b: int.from_bytes(b, "little"))


class Genes:
    """Choices decoded from one integer: each ``take(n)`` consumes a digit in base ``n``. Zero decodes to
    the first option everywhere and ``chance`` to False, so hypothesis shrinking simplifies objects."""

    def __init__(self, value: int) -> None:
        self.value = value

    def take(self, n: int) -> int:
        digit = self.value % n
        self.value //= n
        return digit

    def chance(self, percent: int) -> bool:
        return self.take(100) >= 100 - percent

    def pick(self, options: Sequence[T]) -> T:
        return options[self.take(len(options))]

    def between(self, lo: int, hi: int) -> int:
        return lo + self.take(hi - lo + 1)

    def subset(self, options: Sequence[T], most: int) -> list[T]:
        """1..most distinct options, in their order."""
        want = self.between(1, min(most, len(options)))
        rest = list(options)
        out = []
        for _ in range(want):
            out.append(rest.pop(self.take(len(rest))))
        return [o for o in options if o in out]


def genes(draw: Draw) -> Genes:
    return Genes(draw(GENE))


# --------------------------------------------------------------------------------------------- CEL


def _attr(domain: str, name: str) -> str:
    return f"device.attributes[{domain}].{name}"


def _cap(domain: str, name: str) -> str:
    return f"device.capacity[{domain}].{name}"


def cel_atom(g: Genes, drivers: Sequence[str], consumable: bool) -> str:  # noqa: C901 - a table of expression shapes drawn by number
    """One valid boolean CEL expression over the attributes and capacities the generator writes.

    The domain is usually the device's own driver (``device.driver``), sometimes a fixed one, so that some
    expressions meet devices without the attribute (a CEL runtime error, fatal upstream)."""
    k = g.take(10)
    d = "device.driver" if k < 7 else f"'{g.pick(drivers)}'"
    kind = g.take(28)
    if kind == 0:
        return f"device.driver == '{g.pick(drivers)}'"
    if kind == 1:
        return f"{_attr(d, 'model')} == '{g.pick(MODELS)}'"
    if kind == 2:
        return f"{_attr(d, 'model')} != '{g.pick(MODELS)}'"
    if kind == 3:
        models = g.subset(MODELS, 2)
        return f"{_attr(d, 'model')} in [{', '.join(repr(m) for m in models)}]"
    if kind == 4:
        return f"{_attr(d, 'index')} {g.pick(('<', '>=', '=='))} {g.between(0, 4)}"
    if kind == 5:
        # unguarded: a device without the attribute is a CEL runtime error
        return _attr(d, "fast")
    if kind == 6:
        return f"has({_attr(d, 'fast')}) && {_attr(d, 'fast')}"
    if kind == 7:
        v = g.pick(VERSIONS)
        return f"!has({_attr(d, 'fw')}) || {_attr(d, 'fw')}.isGreaterThan(semver('{v}'))"
    if kind == 8:
        v = g.pick(VERSIONS)
        op = g.pick((">=", "<", "=="))
        return f"has({_attr(d, 'fw')}) && {_attr(d, 'fw')}.compareTo(semver('{v}')) {op} 0"
    if kind == 9:
        q = g.pick(("10Gi", "16Gi", "40Gi", "64Gi"))
        return f"{_cap(d, 'memory')}.compareTo(quantity('{q}')) >= 0"
    if kind == 10:
        q = g.pick(("10Gi", "16Gi", "40Gi"))
        return f"{_cap(d, 'memory')}.isGreaterThan(quantity('{q}'))"
    if kind == 11:
        return f"{_attr(d, 'model')}.startsWith('{g.pick(('a', 'h', 'l'))}')"
    if kind == 12:
        return f"{_attr(repr(SHARED_DOMAIN), 'numa')} == {g.between(0, 1)}"
    if kind == 13:
        return f"'rack' in device.attributes['{SHARED_DOMAIN}']"
    if kind == 14:
        return f"'cores' in device.capacity[{d}] && {_cap(d, 'cores')}.isLessThan(quantity('6'))"
    if kind == 15 and consumable:
        return f"device.allowMultipleAllocations == {g.pick(('true', 'false'))}"
    if kind == 16:
        return f"{_attr(d, 'index')} % 2 == {g.between(0, 1)}"
    if 17 <= kind <= 27:
        return _fidelity_atom(g, d, kind)
    return "true"


def _fidelity_atom(g: Genes, d: str, kind: int) -> str:
    """The CEL fidelity families: optional chaining, type(), quantity representations, string(quantity), RE2."""
    if kind in (17, 18):
        access = g.pick((".?model", "[?'model']", ".?nope", "[?'nope']"))
        tail = ".orValue('')" if not g.chance(15) else ".value()"  # value() of an absent one: an error
        fn = g.pick(STRING_FUNCTIONS)
        arg = g.pick(("^h", "0$", "a1")) if fn == "matches" else g.pick(("h1", "a", "00", "l4"))
        return f"device.attributes[{d}]{access}{tail}.{fn}('{arg}')"
    if kind == 19:
        return f"device.attributes[{d}].?index.orValue({g.between(0, 7)}) >= {g.between(0, 7)}"
    if kind == 20:
        name = g.pick(("index", "model", "fast", "fw"))
        guard = "" if name in ("index", "model") else f"has({_attr(d, name)}) && "
        return f"{guard}type({_attr(d, name)}) == {g.pick(('int', 'string', 'bool'))}"
    units = f"'units' in device.capacity[{d}] && {_cap(d, 'units')}"
    if kind == 21:
        return f"{units}.isInteger()"
    if kind == 22:  # a runtime error for every non-integer representation
        return f"{units}.asInteger() {g.pick(('>', '<='))} {g.pick((1, 2, 1000))}"
    if kind == 23:
        op = g.pick(("add", "sub"))
        other = f"quantity('{g.pick(QUANTITY_TEXTS)}')" if not g.chance(30) else str(g.between(0, 3))
        return f"{units}.{op}({other}).isInteger()"
    if kind == 24:
        a, b = g.pick(QUANTITY_TEXTS), g.pick(QUANTITY_TEXTS)
        return f"quantity('{a}').{g.pick(('add', 'sub'))}(quantity('{b}')).isInteger()"
    if kind == 25:
        return f"{units} {g.pick(('==', '!='))} quantity('{g.pick(QUANTITY_TEXTS)}')"
    if kind == 26:
        if g.chance(10):  # a compile error upstream: capacity values are Quantities, string() has none
            return f"'units' in device.capacity[{d}] && string({_cap(d, 'units')}) == '2'"
        return f"{_attr(d, 'model')}.find('{g.pick(REGEXES)}') {g.pick(('==', '!='))} ''"
    return f"size({_attr(d, 'model')}.findAll('{g.pick(REGEXES)}')) >= {g.between(0, 2)}"


def cel_expression(g: Genes, drivers: Sequence[str], consumable: bool) -> str:
    a = cel_atom(g, drivers, consumable)
    shape = g.take(10)
    if shape <= 5:
        return a
    b = cel_atom(g, drivers, consumable)
    if shape <= 7:
        return f"({a}) && ({b})"
    if shape == 8:
        return f"({a}) || ({b})"
    return f"!({a})"


def _selectors(exprs: list[str]) -> list[dict[str, Any]]:
    return [{"cel": {"expression": e}} for e in exprs]


# --------------------------------------------------------------------------------------------- devices


class _PoolCtx:
    """What the devices of one pool may use."""

    def __init__(
        self, consumable: bool, counter_sets: dict[str, dict[str, str]], per_device: bool, lists: bool = False
    ) -> None:
        self.consumable = consumable
        self.lists = lists
        self.counter_sets = counter_sets
        self.per_device = per_device


def device(g: Genes, name: str, ctx: _PoolCtx) -> dict[str, Any]:  # noqa: C901 - each optional device field drawn with its own chance
    attrs: dict[str, Any] = {"model": {"string": g.pick(MODELS)}, "index": {"int": g.between(0, 7)}}
    if not g.chance(30):
        attrs["fast"] = {"bool": g.chance(50)}
    if not g.chance(25):
        attrs["fw"] = {"version": g.pick(DEVICE_VERSIONS)}
    if not g.chance(30):
        attrs[f"{SHARED_DOMAIN}/numa"] = {"int": g.between(0, 1)}
    if g.chance(40):
        attrs[f"{SHARED_DOMAIN}/rack"] = {"string": g.pick(RACKS)}
    if ctx.lists and g.chance(60):
        attrs[f"{SHARED_DOMAIN}/peers"] = {"strings": g.subset(("p0", "p1", "p2"), 2)}
    dev: dict[str, Any] = {"name": name, "attributes": attrs}
    mem = g.pick(MEMORY)
    capacity: dict[str, Any] = {"memory": {"value": mem}}
    multi = ctx.consumable and g.chance(15)
    if multi:
        dev["allowMultipleAllocations"] = True
        policy = g.take(4)
        if policy == 1:
            step = g.pick(("1Gi", "2Gi"))
            capacity["memory"]["requestPolicy"] = {"default": step, "validRange": {"min": step, "step": step}}
        elif policy == 2:
            capacity["memory"]["requestPolicy"] = {"default": "4Gi", "validValues": ["4Gi", "8Gi"]}
        elif policy == 3:
            capacity["memory"]["requestPolicy"] = {"default": "1Gi", "validRange": {"min": "1Gi", "max": mem}}
    if g.chance(35):
        capacity["units"] = {"value": g.pick(QUANTITY_TEXTS)}
    if g.chance(40):
        capacity["cores"] = {"value": g.pick(("4", "8"))}
        if multi and g.chance(50):
            capacity["cores"]["requestPolicy"] = {
                "default": "500m",
                "validRange": {"min": "500m", "step": "250m"},
            }
    dev["capacity"] = capacity
    if ctx.counter_sets and not g.chance(30):
        cs = g.pick(sorted(ctx.counter_sets))
        chosen = g.subset(sorted(ctx.counter_sets[cs]), 2)
        dev["consumesCounters"] = [
            {"counterSet": cs, "counters": {n: {"value": _counter_use(g, n)} for n in chosen}}
        ]
        others = [o for o in sorted(ctx.counter_sets) if o != cs]
        if others and g.chance(25):  # a device spanning two counter sets
            dev["consumesCounters"].append(
                {"counterSet": others[0], "counters": {"memory": {"value": "10Gi"}}}
            )
        if g.chance(2):  # a counter set the pool does not have: the pool is invalid
            dev["consumesCounters"][0]["counterSet"] = "set-9"
    if g.chance(15):
        taints = []
        for key in g.subset(TAINT_KEYS, 2):
            t: dict[str, Any] = {"key": key, "effect": g.pick(("NoSchedule", "NoExecute", "None"))}
            if g.chance(50):
                t["value"] = "yes"
            taints.append(t)
        dev["taints"] = taints
    if g.chance(5):
        dev["bindsToNode"] = True
        dev["bindingConditions"] = ["example.com/ready"]
        dev["bindingFailureConditions"] = ["example.com/failed"]
    if ctx.per_device:
        dev.update(_per_device_selection(g))
    return dev


def channel(g: Genes, name: str, ctx: _PoolCtx) -> dict[str, Any]:
    """A device of a second driver beside the GPUs in a pool of the same name, like NVIDIA's ComputeDomain
    channels next to its GPUs: other attributes (no model, index only sometimes), no capacity, so that a
    selector written for the GPUs fails on it at run time ("no such key") unless it checks the driver."""
    attrs: dict[str, Any] = {"type": {"string": "channel"}, "id": {"int": g.between(0, 7)}}
    if g.chance(30):
        attrs["index"] = {"int": g.between(0, 7)}
    dev: dict[str, Any] = {"name": name, "attributes": attrs}
    if ctx.per_device:
        dev.update(_per_device_selection(g))
    return dev


def _counter_use(g: Genes, counter: str) -> str:
    if counter == "memory":
        return g.pick(("10Gi", "20Gi", "40Gi"))
    return str(g.between(1, 2))


def _node_selection(g: Genes, per_device_ok: bool) -> tuple[str, dict[str, Any]]:
    """How a pool's slices select nodes: (kind, spec fields)."""
    kind = g.take(12)
    if kind <= 5:
        return "local", {"nodeName": NODE_NAME}
    if kind == 6:
        return "other", {"nodeName": OTHER_NODE}
    if kind == 7:
        return "all", {"allNodes": True}
    if kind in (8, 9):
        if g.chance(50):
            req = {"key": "region", "operator": "In", "values": [g.pick(("region-1", "region-2"))]}
            term: dict[str, Any] = {"matchExpressions": [req]}
        else:
            term = {
                "matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [g.pick((NODE_NAME, OTHER_NODE))]}
                ]
            }
        return "selector", {"nodeSelector": {"nodeSelectorTerms": [term]}}
    if per_device_ok:
        return "per-device", {"perDeviceNodeSelection": True}
    return "local", {"nodeName": NODE_NAME}


def _per_device_selection(g: Genes) -> dict[str, Any]:
    k = g.take(4)
    if k == 0:
        return {"nodeName": NODE_NAME}
    if k == 1:
        return {"allNodes": True}
    if k == 2:
        return {"nodeName": OTHER_NODE}
    return {
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "planet", "operator": "In", "values": ["earth"]}]}
            ]
        }
    }


def _slice(name: str, driver: str, pool: str, generation: int, count: int, spec: dict[str, Any]) -> Doc:
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
            **spec,
        },
    }


@st.composite
def pool_slices(
    draw: Draw, driver: str, pool: str, features: dict[str, bool], channels: bool = False
) -> list[Doc]:
    """The slices of one pool (current generation, maybe a leftover of an older one); with ``channels``, of
    :func:`channel` devices."""
    g = genes(draw)
    kind, where = _node_selection(g, per_device_ok=features["PartitionableDevices"])
    generation = g.between(1, 3)
    counter_sets: dict[str, dict[str, str]] = {}
    # Counter sets live in a counters-only slice of the pool (the 1.35+ layout).
    if g.chance(30):
        for i in range(g.between(1, 2)):
            counters = {"memory": g.pick(("40Gi", "80Gi"))}
            if g.chance(60):
                counters["slots"] = str(g.between(1, 3))
            counter_sets[f"set-{i}"] = counters
    ctx = _PoolCtx(
        features["ConsumableCapacity"], counter_sets, kind == "per-device", features["ListTypeAttributes"]
    )
    n_slices = g.between(1, 3)
    # Slice names are not in creation order on purpose: upstream visits slices sorted by name.
    suffixes = ["s0", "s1", "s2", "s3", "s4", "s5"]
    for i in range(len(suffixes) - 1, 0, -1):
        j = g.take(i + 1)
        suffixes[i], suffixes[j] = suffixes[j], suffixes[i]
    device_lists: list[list[dict[str, Any]]] = []
    n = 0
    for s in range(n_slices):
        devices = []
        for _ in range(draw(st.integers(1 if s == 0 else 0, 4))):
            devices.append((channel if channels else device)(genes(draw), f"dev-{n}", ctx))
            n += 1
        device_lists.append(devices)
    if g.chance(3):
        # a big slice: "All" and large counts run into the 32-results-per-claim limit
        big = []
        for _ in range(g.between(28, 36)):
            big.append(device(Genes(n), f"dev-{n}", ctx))
            n += 1
        device_lists.append(big)
    if g.chance(2):
        # the same device name twice in one pool: the pool is invalid
        device_lists[-1].append(copy.deepcopy(device_lists[0][0]))
    sets = [
        {"name": name, "counters": {k: {"value": v} for k, v in c.items()}}
        for name, c in sorted(counter_sets.items())
    ]
    counter_slices = [sets] if sets else []
    if sets and g.chance(12):
        # the sets split over two counters-only slices, sometimes with one name twice (the pool is invalid)
        counter_slices = [sets[:1], sets[1:] or [copy.deepcopy(sets[0])]]
    total = len(device_lists) + len(counter_slices)
    count = total + (1 if g.chance(12) else 0)  # one slice short: an incomplete pool
    names = iter(f"{driver}-{pool}-{x}" for x in suffixes)
    slices: list[Doc] = []
    for cs in counter_slices:
        sel = {"nodeName": NODE_NAME} if kind == "per-device" else where
        slices.append(_slice(next(names), driver, pool, generation, count, {**sel, "sharedCounters": cs}))
    # a pool whose slices are for different nodes: the other node's slices still count for completeness,
    # and their allocated devices still use the pool's counters
    spread = kind == "local" and g.chance(15)
    for i, devices in enumerate(device_lists):
        here = {"nodeName": g.pick((NODE_NAME, OTHER_NODE))} if spread and i else where
        slices.append(_slice(next(names), driver, pool, generation, count, {**here, "devices": devices}))
    if generation > 1 and g.chance(15):
        old = copy.deepcopy(slices[-1])  # a leftover of an older generation: ignored
        old["metadata"]["name"] = f"{driver}-{pool}-old"
        old["spec"]["pool"]["generation"] = generation - 1
        slices.append(old)
    return slices


# --------------------------------------------------------------------------------------------- claims


def _tolerations(g: Genes) -> list[dict[str, Any]]:
    out = []
    for _ in range(g.between(1, 2)):
        t: dict[str, Any] = {}
        if not g.chance(20):
            t["key"] = g.pick(TAINT_KEYS)
        if g.chance(50):
            t["operator"] = "Exists"
        else:
            t["operator"] = "Equal"
            if g.chance(50):
                t["value"] = "yes"
        if g.chance(50):
            t["effect"] = g.pick(("NoSchedule", "NoExecute"))
        out.append(t)
    return out


def request_body(
    g: Genes, classes: Sequence[str], drivers: Sequence[str], features: dict[str, bool]
) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": g.pick(classes)}
    if g.chance(40):
        n = g.between(1, 2)
        body["selectors"] = _selectors(
            [cel_expression(g, drivers, features["ConsumableCapacity"]) for _ in range(n)]
        )
    if g.chance(15):
        body["allocationMode"] = "All"
    else:
        body["allocationMode"] = "ExactCount"
        body["count"] = 1 if not g.chance(35) else g.between(2, 3) if not g.chance(5) else g.between(20, 34)
    if g.chance(12):
        body["tolerations"] = _tolerations(g)
    # without DRAConsumableCapacity the API server drops capacity requests from new claims; a claim stored
    # before the gate was turned off keeps them: the stable allocator ignores them, the others reject them
    if g.chance(12) and (features["ConsumableCapacity"] or g.chance(30)):
        reqs = {"memory": g.pick(("1Gi", "3Gi", "4Gi", "10Gi", "100Gi"))}
        if g.chance(30):
            reqs["cores"] = g.pick(("500m", "600m", "1"))
        body["capacity"] = {"requests": reqs}
    # without DRADerivedAttributes the API server drops them from new claims; a claim stored while it was on
    # keeps them, and every allocator then refuses the request
    if g.chance(30 if features["DerivedAttributes"] else 1):
        body["derivedAttributes"] = [
            {"name": g.pick(DERIVED_NAMES), "expression": g.pick(DERIVED_EXPRESSIONS)}
            for _ in range(g.between(1, 2))
        ]
    return body


@st.composite
def claim(
    draw: Draw, index: int, classes: Sequence[str], drivers: Sequence[str], features: dict[str, bool]
) -> Doc:
    g = genes(draw)
    requests: list[dict[str, Any]] = []
    names: list[str] = []  # what a constraint or a config may reference
    for r in range(g.between(1, 3) if g.chance(50) else 1):
        rg = genes(draw)
        name = f"req-{r}"
        if features["PrioritizedList"] and rg.chance(25):
            subs = []
            for s in range(rg.between(2, 3)):
                subs.append({"name": f"sub-{s}", **request_body(genes(draw), classes, drivers, features)})
                names.append(f"{name}/sub-{s}")
            requests.append({"name": name, "firstAvailable": subs})
        else:
            body = request_body(rg, classes, drivers, features)
            if features["AdminAccess"] and rg.chance(6):
                body["adminAccess"] = True
            requests.append({"name": name, "exactly": body})
        names.append(name)
    devices: dict[str, Any] = {"requests": requests}
    bodies = [b for r in requests for b in (r.get("exactly", {}), *r.get("firstAvailable", ()))]
    if g.chance(50 if any("derivedAttributes" in b for b in bodies) else 25):
        constraints = []
        for _ in range(g.between(1, 2)):
            c: dict[str, Any] = {}
            if g.chance(50):
                c["requests"] = g.subset(names, 2)
            # distinctAttribute came with DRAConsumableCapacity: the API server drops it from new claims when
            # that is off, so without it only rarely (a claim stored before the gate was turned off)
            distinct = g.chance(35) and (features["ConsumableCapacity"] or g.chance(10))
            choices = CONSTRAINT_ATTRIBUTES + (DERIVED_NAMES if features["DerivedAttributes"] else ())
            c["distinctAttribute" if distinct else "matchAttribute"] = g.pick(choices)
            constraints.append(c)
        devices["constraints"] = constraints
    if g.chance(20):
        configs = []
        for i in range(g.between(1, 2)):
            cfg: dict[str, Any] = {
                "opaque": {"driver": g.pick(drivers), "parameters": {"claim": f"c{index}-{i}"}}
            }
            if g.chance(60):
                cfg["requests"] = g.subset(names, 2)
            configs.append(cfg)
        devices["config"] = configs
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaim",
        "metadata": {"name": f"claim-{index}", "namespace": "default", "uid": f"uid-claim-{index}"},
        "spec": {"devices": devices},
    }


def device_class(g: Genes, name: str, drivers: Sequence[str], features: dict[str, bool]) -> Doc:
    spec: dict[str, Any] = {}
    k = g.take(5)
    if k <= 2:
        spec["selectors"] = _selectors([f"device.driver == '{drivers[k % len(drivers)]}'"])
    elif k == 3:
        spec["selectors"] = _selectors([cel_expression(g, drivers, features["ConsumableCapacity"])])
    if g.chance(25):
        spec["config"] = [{"opaque": {"driver": g.pick(drivers), "parameters": {"class": name}}}]
    return {"apiVersion": RESOURCE_API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


# --------------------------------------------------------------------------------------------- scenario


STABLE_ONLY = ("AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints")
BEYOND_STABLE = ("DeviceBindingAndStatus", "ConsumableCapacity", "FractionalCapacityRange")


def feature_set(g: Genes) -> dict[str, bool]:
    """Features that pick each upstream allocator variant about a third of the time (``compare.implementation``):
    incubating (a release's defaults, or a random set beyond stable's without ListTypeAttributes), stable
    (a random set of what it supports) and experimental (ListTypeAttributes on). A zero gene is 1.37's
    defaults."""
    variant = g.take(10)
    if variant <= 3:  # incubating
        if not g.chance(50):
            if g.chance(25):  # 1.36's defaults (its gates as kube-scheduler maps them), on the 1.37 allocator
                return {name: DEFAULT_FEATURES["1.36"].get(name, False) for name in ALL_FEATURES}
            return dict(DEFAULT_FEATURES["1.37"])
        out = {name: g.chance(50) for name in KUBEDRA_FEATURES}
        out["ListTypeAttributes"] = False
        out["DerivedAttributes"] = False  # only the experimental allocator has it at 1.37
        if not any(out[name] for name in BEYOND_STABLE):
            out[g.pick(BEYOND_STABLE)] = True
    elif variant <= 6:  # stable: only what it supports, mostly with the 1.37 defaults among them
        out = {name: not g.chance(25) for name in STABLE_ONLY}
    else:  # experimental
        out = {name: g.chance(50) for name in KUBEDRA_FEATURES}
        out["ListTypeAttributes"] = True
    for name in ALL_FEATURES:
        out.setdefault(name, False)
    return out


def _device_ids(slices: list[Doc]) -> list[tuple[str, bool]]:
    """("driver/pool/device", allowMultipleAllocations) of every device in the slices."""
    out = []
    for s in slices:
        spec = s["spec"]
        for d in spec.get("devices") or []:
            out.append(
                (
                    f"{spec['driver']}/{spec['pool']['name']}/{d['name']}",
                    bool(d.get("allowMultipleAllocations")),
                )
            )
    return out


def _taint_rules(g: Genes, drivers: Sequence[str]) -> list[Doc]:
    rules = []
    for i in range(g.between(1, 2)):
        sel: dict[str, str] = {}
        if not g.chance(20):
            sel["driver"] = g.pick(drivers)
        if not g.chance(40):
            sel["pool"] = g.pick(("pool-a", "pool-b"))
        if g.chance(50):
            sel["device"] = f"dev-{g.between(0, 3)}"
        spec: dict[str, Any] = {
            "taint": {"key": g.pick(TAINT_KEYS), "effect": g.pick(("NoSchedule", "NoExecute"))}
        }
        if sel or g.chance(30):
            spec["deviceSelector"] = sel
        rules.append(
            {
                "apiVersion": RESOURCE_API,
                "kind": "DeviceTaintRule",
                "metadata": {"name": f"rule-{i}"},
                "spec": spec,
            }
        )
    return rules


@st.composite
def scenarios(draw: Draw) -> Doc:
    g = genes(draw)
    features = feature_set(g)
    drivers = DRIVERS[: 1 if not g.chance(50) else 2]
    # the second driver publishes channels beside the first one's GPUs, in pools of the same names
    channels = len(drivers) > 1 and g.chance(50)
    slices: list[Doc] = []
    for driver in drivers:
        for p in range(1 if not g.chance(40) else 2):
            slices.extend(
                draw(pool_slices(driver, f"pool-{'ab'[p]}", features, channels and driver == DRIVERS[1]))
            )
    if g.chance(50):  # creation order is what the API lists; upstream sorts pools and slices itself
        slices.reverse()
    class_names = [f"class-{i}" for i in range(g.between(1, 3))]
    classes = [device_class(genes(draw), n, drivers, features) for n in class_names]
    referable = [*class_names, "no-such-class"] if g.chance(2) else class_names
    claims = [draw(claim(i, referable, drivers, features)) for i in range(g.between(1, 3))]

    allocated: list[str] = []
    shared: list[str] = []
    consumed: dict[str, dict[str, str]] = {}
    ag = genes(draw)
    for did, multi in _device_ids(slices):
        if not ag.chance(15):
            continue
        if multi and features["ConsumableCapacity"]:
            shared.append(f"{did}/0b0b0b0b-1111-2222-3333-4444444444{len(shared):02d}")
            consumed[did] = {"memory": ag.pick(("4Gi", "8Gi", "16Gi"))}
        else:
            allocated.append(did)

    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": NODE_NAME, "labels": {"region": "region-1", "planet": "earth"}},
    }
    doc: Doc = {
        "features": features,
        "node": node,
        "slices": slices,
        "classes": classes,
        "claims": claims,
        "allocatedDevices": allocated,
        "allocatedSharedDeviceIDs": shared,
        "allocatedCapacity": consumed,
        "fixedShareID": True,
    }
    if features["DeviceTaints"] and g.chance(10):
        doc["deviceTaintRules"] = _taint_rules(genes(draw), drivers)
    # from the genes already drawn (what is left of the scenario's and the allocations'), so that the draws, and
    # with them every other scenario of a seed, stay as they were
    if features["ConsumableCapacity"] and g.chance(8):
        _big_quantities(Genes(g.value | ag.value << 128), doc)
    if features["PartitionableDevices"] and g.chance(8):
        _big_counters(Genes(g.value | ag.value << 128), doc)
    return doc


def _big_quantities(g: Genes, doc: Doc) -> None:
    """Give every shared device a ``units`` capacity from :data:`BIG_CAPACITIES`, about half of the requests a
    ``units`` request and some allocated shared devices a ``units`` consumption from the pools above."""
    for s in doc["slices"]:
        for d in s["spec"].get("devices") or []:
            if d.get("allowMultipleAllocations"):
                d.setdefault("capacity", {})["units"] = {"value": g.pick(BIG_CAPACITIES)}
    for body in _request_bodies(doc["claims"]):
        if g.chance(50):
            body.setdefault("capacity", {}).setdefault("requests", {})["units"] = g.pick(BIG_REQUESTS)
    for caps in doc["allocatedCapacity"].values():
        if g.chance(60):
            caps["units"] = g.pick(BIG_CONSUMED)


def _big_counters(g: Genes, doc: Doc) -> None:
    """Give every shared counter a value from :data:`BIG_COUNTERS` and most device consumptions one from
    :data:`BIG_COUNTER_USES`."""
    for s in doc["slices"]:
        for cs in s["spec"].get("sharedCounters") or []:
            for counter in cs["counters"].values():
                counter["value"] = g.pick(BIG_COUNTERS)
        for d in s["spec"].get("devices") or []:
            for cc in d.get("consumesCounters") or []:
                for counter in cc["counters"].values():
                    if g.chance(80):
                        counter["value"] = g.pick(BIG_COUNTER_USES)


def _request_bodies(claims: list[Doc]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in claims:
        for r in c["spec"]["devices"]["requests"]:
            out.extend([r["exactly"]] if "exactly" in r else r.get("firstAvailable") or [])
    return out


def sample(n: int, the_seed: int) -> list[Doc]:
    """The first ``n`` scenarios Hypothesis generates from ``the_seed`` (no shrinking, no example database): a
    fixed sample for tests that pin what the generator draws or send its objects to a real server."""
    docs: list[Doc] = []

    @seed(the_seed)
    @settings(
        max_examples=n,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(scenarios())
    def collect(doc: Doc) -> None:
        docs.append(doc)

    collect()
    return docs


# ------------------------------------------------------------------------------------------------- 1.34

# The 1.34 allocator's structured.Features (k8s.io/dynamic-resource-allocation v0.34.13 structured/internal/
# types.go; the oracle sets its DeviceBinding and DeviceStatus from DeviceBindingAndStatus).
FEATURES_134 = frozenset(
    {
        "AdminAccess",
        "ConsumableCapacity",
        "DeviceBindingAndStatus",
        "DeviceTaints",
        "PartitionableDevices",
        "PrioritizedList",
    }
)


def as_134(doc: Doc) -> Doc:
    """A scenario as a 1.34 cluster stores it: its allocator's features only, and the objects its API has.

    - Counter layout: in 1.34 a ResourceSlice's ``sharedCounters`` are for the devices of that same slice
      (k8s.io/kubernetes v1.34.4 pkg/apis/resource/validation validateResourceSliceSpec: a device's
      ``consumesCounters`` "must reference a counterSet defined in the ResourceSlice sharedCounters"), so
      each pool's counters-only slices become the ``sharedCounters`` of each of its device slices (one set of
      a name), ``resourceSliceCount`` shrinks by the counters-only slices, and a consumption of a set the pool
      lacks (which 1.34's validation rejects) is left out.
    - No taint effect ``None`` (from 1.35), list-type attributes (from 1.36) or derived attributes (1.37)."""
    doc = copy.deepcopy(doc)
    doc["features"] = {k: v for k, v in doc["features"].items() if k in FEATURES_134}
    for c in doc["claims"]:
        for r in c["spec"]["devices"]["requests"]:
            for body in (r.get("exactly") or {}, *r.get("firstAvailable", ())):
                body.pop("derivedAttributes", None)
    sets: dict[tuple[str, str, int], dict[str, Doc]] = {}
    dropped: dict[tuple[str, str], int] = {}
    slices = []
    for s in doc["slices"]:
        spec = s["spec"]
        pool = (spec["driver"], spec["pool"]["name"])
        if spec.get("sharedCounters") and not spec.get("devices"):
            for cs in spec["sharedCounters"]:
                sets.setdefault((*pool, spec["pool"]["generation"]), {}).setdefault(cs["name"], cs)
            dropped[pool] = dropped.get(pool, 0) + 1
            continue
        slices.append(s)
    for s in slices:
        spec = s["spec"]
        pool = (spec["driver"], spec["pool"]["name"])
        spec["pool"]["resourceSliceCount"] -= dropped.get(pool, 0)
        own = sets.get((*pool, spec["pool"]["generation"])) or sets.get(
            (*pool, spec["pool"]["generation"] + 1)
        )
        if own and spec.get("devices"):
            spec["sharedCounters"] = [own[n] for n in sorted(own)]
        for d in spec.get("devices") or []:
            d["attributes"] = {
                k: v
                for k, v in d.get("attributes", {}).items()
                if len(v) == 1 and next(iter(v)) in ("int", "bool", "string", "version")
            }
            if d.get("taints"):
                d["taints"] = [t for t in d["taints"] if t["effect"] != "None"]
                if not d["taints"]:
                    del d["taints"]
            if "consumesCounters" in d:
                d["consumesCounters"] = [
                    cc
                    for cc in d["consumesCounters"]
                    if own
                    and cc["counterSet"] in own
                    and set(cc["counters"]) <= set(own[cc["counterSet"]]["counters"])
                ]
                if not d["consumesCounters"]:
                    del d["consumesCounters"]
    doc["slices"] = slices
    return doc
