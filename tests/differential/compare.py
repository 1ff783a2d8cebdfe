"""Run one scenario through kubedra's allocator and put both answers in one comparable shape.

An *outcome* is ``{"kind": "allocated" | "unsatisfiable" | "error" | "panic" | "crash", "error": str | None,
"claims": [...]}`` with one entry per claim, in claim order:
``{"devices": sorted canonical device results, "nodeSelector": normalised, "config": [...]}``.

Comparison rules (the brief's and upstream's): device results order-insensitive within a claim, each with
request, driver, pool, device, adminAccess, tolerations, binding conditions, shareID (fixed by both sides)
and consumedCapacity (by value, canonical form); node selector terms/requirements/values as multisets;
config exact. Errors: both must fail; the messages are compared loosely (reported, not asserted). A panic of
upstream's allocator (the oracle recovers it) agrees only with kubedra refusing the input by naming the same
panic (``UpstreamPanicError``): the same runtime message exactly. Where kubedra says upstream may panic depending on
its random pool and slice order (``PoolOrderPanicError``), upstream's answer must be one of those it lists.
"""

from __future__ import annotations

import functools
import json
import re
import signal
from pathlib import Path
from typing import Any

from kubedra.allocator import (
    AllocatedState,
    AllocationError,
    Allocator,
    FailedOnNodeError,
    Features,
    PoolOrderPanicError,
    SelectorMatcher,
    UpstreamPanicError,
    apply_taint_rules,
)
from kubedra.errors import InputError
from kubedra.k8s.quantity import parse_quantity, quantity_rules
from kubedra.k8s.versions import Version
from kubedra.model.parse import parse_object
from kubedra.model.serialize import allocation_dict
from kubedra.testing.oracle import FIXED_SHARE_ID

Outcome = dict[str, Any]

# k8s.io/dynamic-resource-allocation/structured picks the first implementation whose SupportedFeatures
# cover the enabled ones (allocator.go NewAllocator; the sets are in internal/*/allocator_*.go).
STABLE_FEATURES = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})
INCUBATING_FEATURES = STABLE_FEATURES | {
    "DeviceBindingAndStatus",
    "ConsumableCapacity",
    "FractionalCapacityRange",
}


def implementation(features: dict[str, bool], version: str = "1.37") -> str:
    """Which upstream allocator code the oracle (and kube-scheduler) runs for these features, named as in
    v0.37. v0.38 promoted each one a step: its stable variant is v0.37's incubating code (pools sorted, so its
    answers are exact) with v0.37 incubating's SupportedFeatures, its incubating v0.37's experimental."""
    on = {n for n, v in features.items() if v}
    if Version.parse(version) < Version(1, 35):
        # v0.34's GatherPools ranges over a map in every variant (structured/internal/*/pools_*.go; none sorts
        # pools or slices): each answers like the stable one here, exact only up to pool and slice order
        return "stable"
    if Version.parse(version) >= Version(1, 38):
        return "incubating" if on <= INCUBATING_FEATURES else "experimental"
    if on <= STABLE_FEATURES:
        return "stable"
    if on <= INCUBATING_FEATURES:
        return "incubating"
    return "experimental"


def ordered(features: dict[str, bool], version: str = "1.37") -> bool:
    """Whether upstream's allocator for these features visits pools in a fixed order, so that its exact allocation
    can be compared: the incubating and experimental allocators from v0.36 sort pools and slices by name; every
    release's stable one and every v0.35 variant (pools_*.go GatherPools ranges over a map, no sort) do not."""
    return implementation(features, version) != "stable" and Version.parse(version) >= Version(1, 36)


def _typed(obj: dict[str, Any]) -> Any:
    parsed = parse_object(json.loads(json.dumps(obj)))  # a private copy, faster than deepcopy
    if parsed is None:
        raise InputError(f"{obj.get('kind')}: not a kind kubedra parses")
    return parsed.obj


def _canon(x: Any) -> str:
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


def _quantity(text: str) -> str:
    return parse_quantity(text).canonical()


def _device_result(d: dict[str, Any]) -> str:
    out: dict[str, Any] = {k: d[k] for k in ("request", "driver", "pool", "device")}
    if d.get("adminAccess"):
        out["adminAccess"] = True
    tols = [{k: v for k, v in t.items() if v not in (None, "", [])} for t in d.get("tolerations") or []]
    if tols:
        out["tolerations"] = tols
    for key in ("bindingConditions", "bindingFailureConditions"):
        if d.get(key):
            out[key] = list(d[key])
    if d.get("shareID"):
        out["shareID"] = FIXED_SHARE_ID if d["shareID"] else ""
    if d.get("consumedCapacity"):
        out["consumedCapacity"] = {k: _quantity(v) for k, v in d["consumedCapacity"].items()}
    return _canon(out)


def _selector(ns: dict[str, Any] | None) -> Any:
    if not ns:
        return None

    def reqs(rs: list[dict[str, Any]] | None) -> list[Any]:
        return sorted((r["key"], r["operator"], sorted(r.get("values") or [])) for r in rs or [])

    return sorted(
        [reqs(t.get("matchExpressions")), reqs(t.get("matchFields"))]
        for t in ns.get("nodeSelectorTerms") or []
    )


def _config(cfgs: list[dict[str, Any]] | None) -> list[Any]:
    out = []
    for c in cfgs or []:
        entry: dict[str, Any] = {"source": c.get("source")}
        if c.get("requests"):
            entry["requests"] = list(c["requests"])
        if c.get("opaque"):
            entry["opaque"] = {
                "driver": c["opaque"].get("driver"),
                "parameters": c["opaque"].get("parameters"),
            }
        out.append(entry)
    return out


def _claim(results: list[dict[str, Any]], node_selector: Any, config: Any) -> dict[str, Any]:
    return {
        "devices": sorted(_device_result(r) for r in results),
        "nodeSelector": _selector(node_selector),
        "config": _config(config),
    }


def oracle_outcome(result: dict[str, Any]) -> Outcome:
    if result.get(
        "panic"
    ):  # upstream's allocator panicked (the oracle recovers it; kube-scheduler would die)
        return {"kind": "panic", "error": result["panic"], "claims": []}
    if result.get("error"):
        return {
            "kind": "error",
            "error": result["error"],
            "claims": [],
            "onNode": bool(result.get("failedOnNode")),
        }
    if not result.get("allocated"):
        return {"kind": "unsatisfiable", "error": None, "claims": []}
    claims = [_claim(c["results"], c.get("nodeSelector"), c.get("config")) for c in result["claims"]]
    return {"kind": "allocated", "error": None, "claims": claims}


_MATCHERS: dict[tuple[bool, bool, str, bool], tuple[SelectorMatcher, int]] = {}


def _matcher(features: Features, version: str = "1.37") -> SelectorMatcher:
    """A SelectorMatcher shared by scenarios with the same CEL environment, as the simulator shares one
    between nodes: compiled expressions are reused (the grammar repeats them); renewed every few hundred
    scenarios so that its per-device memo does not grow without bound."""
    sees = features.implementation(version) != "stable"  # data/versions.yaml allocator.variantCode
    key = (features.consumable_capacity, features.list_type_attributes, version, sees)
    matcher, uses = _MATCHERS.get(key, (None, 0))
    if matcher is None or uses >= 300:
        matcher = SelectorMatcher(
            target_version=version,
            consumable_capacity=key[0],
            list_type_attributes=key[1],
            sees_allow_multiple=sees,
        )
        uses = 0
    _MATCHERS[key] = (matcher, uses + 1)
    return matcher


class _Timeout(BaseException):
    """Raised by the alarm inside a too long allocation (a BaseException: no handler catches it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def timed_out(o: Outcome) -> bool:
    """A search that was cut off (either side): upstream's search is exponential in the worst case, as is
    kubedra's, and the scheduler gives up on a node after DRASchedulerFilterTimeout."""
    return o["kind"] == "timeout" or (
        o["kind"] == "error" and "context deadline exceeded" in (o["error"] or "")
    )


_MAKEFILE = Path(__file__).resolve().parents[2] / "testbed" / "Makefile"


@functools.cache
def oracle_release(minor: str) -> str:
    """The exact release whose allocator the testbed builds ``minor``'s oracle with: the
    ``k8s.io/dynamic-resource-allocation`` its module file pins (testbed/Makefile ``ORACLE_MODFILE_<minor>``, else
    ``MODFILE_<minor>``; ``v0.35.10`` reads ``v1.35.10``, which may be newer than the ``k8s.io/kubernetes`` patch of
    its control plane, ``K8S_PATCH_<minor>``). kubedra allocates at that patch, since some allocator behaviour
    changed within a minor (``notInPatches`` in data/versions.yaml)."""
    makefile = _MAKEFILE.read_text(encoding="utf-8")
    m = re.search(rf"^ORACLE_MODFILE_{re.escape(minor)}\s*:=\s*(\S+)$", makefile, re.M) or re.search(
        rf"^MODFILE_{re.escape(minor)}\s*:=\s*(\S+)$", makefile, re.M
    )
    if m is None:
        raise LookupError(f"testbed/Makefile has no MODFILE_{minor}")
    modfile = (_MAKEFILE.parent / m.group(1)).read_text(encoding="utf-8")
    pin = re.search(r"^\s*k8s\.io/dynamic-resource-allocation => \S+ v0\.(\S+)$", modfile, re.M)
    if pin is None:
        raise LookupError(f"testbed/{m.group(1)} pins no k8s.io/dynamic-resource-allocation")
    return f"v1.{pin.group(1)}"


def kubedra_outcome(doc: dict[str, Any], timeout: float = 0, version: str = "1.37") -> Outcome:
    """kubedra's answer for an oracle scenario document at a Kubernetes version; ``timeout`` seconds at most
    (main thread only)."""
    if not timeout:
        return _kubedra_outcome(doc, version)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return _kubedra_outcome(doc, version)
    except _Timeout:
        return {"kind": "timeout", "error": f"no answer within {timeout}s", "claims": []}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _kubedra_outcome(doc: dict[str, Any], version: str = "1.37") -> Outcome:
    try:
        features = Features.from_names(n for n, on in doc.get("features", {}).items() if on)
        node = _typed(doc["node"])
        classes = [_typed(c) for c in doc.get("classes", [])]
        slices = [_typed(s) for s in doc.get("slices", [])]
        claims = [_typed(c) for c in doc.get("claims", [])]
        rules = [_typed(r) for r in doc.get("deviceTaintRules") or []]
    except (InputError, ValueError) as e:
        return {"kind": "crash", "error": f"kubedra cannot read the scenario: {e}", "claims": []}
    if rules:
        slices = apply_taint_rules(slices, rules, release=version)
    state = AllocatedState(
        devices={tuple(d.split("/")) for d in doc.get("allocatedDevices", [])},
        shared_ids={tuple(d.split("/")) for d in doc.get("allocatedSharedDeviceIDs", [])},
        capacity={
            tuple(d.split("/")): {k: parse_quantity(q) for k, q in caps.items()}
            for d, caps in (doc.get("allocatedCapacity") or {}).items()
        },
    )
    allocator = Allocator(
        features,
        classes,
        slices,
        allocated=state,
        selector_matcher=_matcher(features, version),
        share_id_factory=lambda: FIXED_SHARE_ID,
        target_version=version,
    )
    try:
        results = allocator.allocate(node, claims)
    except PoolOrderPanicError as e:  # upstream panics in some of its pool orders: every order's answer
        possible = None if e.answers is None else [_answer(allocator, x) for x in e.answers]
        return {"kind": "panic", "error": e.panic, "claims": [], "message": str(e), "possible": possible}
    except Exception as e:  # noqa: BLE001 - an AllocationError is an answer; anything else a bug in kubedra
        return _answer(allocator, e)
    return _answer(allocator, results)


def _answer(allocator: Allocator, answer: Any) -> Outcome:
    """The outcome of one answer of kubedra's allocator: its results (None: no fit) or what it raised."""
    if isinstance(
        answer, UpstreamPanicError
    ):  # kubedra cannot model the input: it names upstream's panic there
        return {"kind": "panic", "error": answer.panic, "claims": [], "message": str(answer)}
    if isinstance(answer, AllocationError):
        return {
            "kind": "error",
            "error": str(answer),
            "claims": [],
            "onNode": isinstance(answer, FailedOnNodeError),
        }
    if isinstance(answer, Exception):  # a bug in kubedra: always a disagreement, reported with its type
        return {"kind": "crash", "error": f"{type(answer).__name__}: {answer}", "claims": []}
    if answer is None:
        return {"kind": "unsatisfiable", "error": None, "claims": []}
    out = []
    # consumed capacity is written as the release's Quantity.String() does (v0.38 writes an exponent past E)
    with quantity_rules(allocator.quantity_since_138):
        for r in answer:
            a = allocation_dict(r)
            out.append(_claim(a["devices"]["results"], a.get("nodeSelector"), a["devices"].get("config")))
    return {"kind": "allocated", "error": None, "claims": out}


def difference(ours: Outcome, theirs: Outcome, exact: bool = True) -> str | None:
    """Why kubedra's outcome differs from the oracle's, or None when they agree.

    ``exact=False`` is for upstream's stable allocator, which visits pools in Go map order (random;
    pools_stable.go GatherPools ranges over a map) and so may pick other devices from run to run: then
    only the outcome, the requests that got devices and the config are compared.

    Where kubedra says upstream may panic depending on its pool order (``possible``: every order's answer,
    ``PoolOrderPanicError``), upstream's answer must be one of them; None there (more orders than kubedra tries)
    agrees with nothing."""
    if "possible" in ours:
        possible = ours["possible"]
        if possible is None:
            return f"kubedra: may panic by pool order (too many orders to try), upstream: {theirs['kind']}"
        if any(difference(p, theirs, exact) is None for p in possible):
            return None
        kinds = ", ".join(p["kind"] + (f" ({p['error']})" if p["error"] else "") for p in possible)
        return f"kubedra: one of {kinds} by pool order, upstream: {theirs['kind']} ({theirs['error']})"
    if ours["kind"] != theirs["kind"]:
        why = f"kubedra: {ours['kind']}, upstream: {theirs['kind']}"
        for who, o in (("kubedra", ours), ("upstream", theirs)):
            if o["error"]:
                why += f"\n  {who} error: {o['error']}"
        return why
    if ours["kind"] == "panic" and ours["error"] != theirs["error"]:
        # kubedra may refuse an input only by naming the very panic upstream's allocator has on it
        return f"both panic, differently\n  kubedra:  {ours['error']}\n  upstream: {theirs['error']}"
    if ours["kind"] == "error" and ours.get("onNode") != theirs.get("onNode"):
        # upstream ErrFailedAllocationOnNode fails this node only; another error aborts the scheduling attempt
        scope = {True: "this node only", False: "the whole attempt"}
        return (
            f"both error, kubedra failing {scope[bool(ours.get('onNode'))]}, upstream "
            f"{scope[bool(theirs.get('onNode'))]}\n  kubedra error: {ours['error']}\n  upstream error: {theirs['error']}"
        )
    if ours["kind"] != "allocated":
        return None
    for i, (a, b) in enumerate(zip(ours["claims"], theirs["claims"], strict=True)):
        if not exact:
            a = {"requests": sorted(json.loads(d)["request"] for d in a["devices"]), "config": a["config"]}
            b = {"requests": sorted(json.loads(d)["request"] for d in b["devices"]), "config": b["config"]}
        for key in a:
            if a[key] != b[key]:
                return f"claim #{i} {key}:\n  kubedra  {a[key]}\n  upstream {b[key]}"
    return None


_UUIDISH = re.compile(r"[0-9a-f]{8}-[0-9a-f-]{27}")


def error_message_difference(ours: Outcome, theirs: Outcome) -> str | None:
    """A loose comparison of two error messages (both errors): the same words, ignoring punctuation and the
    ``ResourceClaim`` vs ``claim`` spelling. Returned for the log; not a failure."""
    if ours["kind"] != "error" or theirs["kind"] != "error":
        return None

    def words(s: str) -> set[str]:
        return set(re.findall(r"[A-Za-z0-9_.#-]+", _UUIDISH.sub("", s.lower())))

    a, b = words(ours["error"]), words(theirs["error"])
    if len(a & b) >= 0.6 * max(1, min(len(a), len(b))):
        return None
    return f"kubedra: {ours['error']}\nupstream: {theirs['error']}"


STABLE_RUNS = 24


def stable_order_explains(
    doc: dict[str, Any], ours: Outcome, oracle: Any, runs: int = STABLE_RUNS, *, error_text: bool = False
) -> bool:
    """Whether upstream's stable allocator can give kubedra's answer for a scenario that selects it.

    The stable allocator visits pools in Go map order (pools_stable.go GatherPools ranges over a map) and the
    slices of a pool in the order it gets them (unsorted; in kube-scheduler that is the informer cache's
    order), so its outcome may depend on chance: it may allocate before ever evaluating a selector that
    fails on another device, or give up in another place. kubedra visits both by name. The oracle gets the
    slices sorted by name, ``runs`` times (each run draws another pool order); any answer that agrees
    with kubedra's means kubedra's is one of upstream's. With ``error_text`` an error must also have kubedra's
    exact text (which device's selector failed first, which pool was incomplete first)."""
    by_name = {**doc, "slices": sorted(doc["slices"], key=lambda s: s["metadata"]["name"])}
    # Go's map order is not uniform over the pools' permutations, and some answers need a rare one: a
    # scenario the first ``runs`` do not explain gets 16 times as many before it counts as a disagreement
    # (a CI run met one that 24 orders missed; the check costs this only for the rare disagreeing scenario).
    for batch in (runs, 16 * runs):
        for r in oracle.run_batch([by_name] * batch):
            theirs = oracle_outcome(r)
            if difference(ours, theirs, exact=False) is None and (
                not error_text or theirs["error"] == ours["error"]
            ):
                return True
    return False
