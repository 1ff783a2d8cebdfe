"""``--bound``: how many of the simulated pods could fit at best, to show what first-fit scheduling strands.

An aggregated CP-SAT model (``ortools``, the optional ``bound`` extra, imported only here and only when
asked): one integer per (GPU, MIG profile) for the instances a GPU is split into, one 0/1 per GPU for "used
whole", and one integer per (pod shape, node, option) for the pods placed there. Per GPU the instances fit
its 8 memory slices and 7 compute slices (a whole GPU takes all of them); per node the pods of a profile
fit the instances of that profile and whole-GPU pods fit the GPUs used whole. Device-plugin nodes are
plain counts per extended resource.

It is a *relaxation*, so the optimum is an upper bound on what any scheduler could place: it ignores
MIG placement geometry (which start positions are free), cpu/memory/pod limits, taints and affinity,
gangs, pods already running on the cluster, and pods whose GPU requests it cannot model (counted as
fitting). When the solver stops at its time limit it reports its proven bound, still an upper bound.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra import vendors
from kubedra.errors import UsageError
from kubedra.k8s.quantity import parse_quantity
from kubedra.scheduler.pods import SimPod
from kubedra.simulate.cluster import DP, ClusterView, gpu_allocatable, is_gpu_resource
from kubedra.simulate.results import TITLES, ModeResult, Simulation

MEMORY_SLICES = 8
COMPUTE_SLICES = 7
TIME_LIMIT_S = 30.0

_PROFILE = re.compile(r"""\.profile\s*==\s*['"](?P<p>[^'"]+)['"]""")
_MEMORY = re.compile(r"""\.memory\.compareTo\(quantity\(['"](?P<q>[^'"]+)['"]\)\)\s*>=\s*0""")


@dataclass(frozen=True)
class Option:
    kind: str  # "full" (whole GPUs, DRA), "mig" (a MIG profile, DRA), "res" (an extended resource, device plugin)
    name: str  # profile or resource name ("" for full)
    count: int
    need: int = 0  # memory each device must have (DRA), bytes


@dataclass
class Shape:
    options: tuple[Option, ...]
    pods: int = 0


@dataclass
class Gpu:
    full: bool  # a whole-GPU device can be allocated
    memory: int
    profiles: dict[str, tuple[int, int, int, int]] = field(
        default_factory=dict
    )  # name -> (g, size, max, memory)
    fixed: dict[str, int] | None = None  # static MIG: instances that exist (None: created on demand)


@dataclass
class Problem:
    shapes: list[Shape]
    gpus: dict[str, list[Gpu]]  # node -> GPUs (DRA)
    units: dict[str, dict[str, int]]  # node -> extended resource -> count (device plugin)
    assumed: int = 0  # pods counted as fitting (no GPU, or GPU requests the model cannot express)


@dataclass
class Bound:
    mode: str
    value: int
    optimal: bool
    placed: int
    total: int
    assumed: int
    seconds: float

    def line(self) -> str:
        what = "optimum of the relaxation" if self.optimal else "proven bound, time limit reached"
        gap = self.value - self.placed
        return (
            f"bound, {TITLES.get(self.mode, self.mode)}: at most {self.value} of {self.total} pods fit "
            f"({what}, {self.seconds:.1f} s); the scheduler placed {self.placed}"
            + (
                f"; a gap of {gap} (fragmentation, priorities or gangs: the bound ignores the last two)"
                if gap > 0
                else ""
            )
            + (f"; {self.assumed} pods counted as fitting without a GPU model" if self.assumed else "")
        )


def _quantity(text: str) -> int:

    return parse_quantity(text).value()


def _dra_option(class_name: str, selectors: Sequence[str], count: int) -> Option | None:
    need = 0
    profile = None
    for sel in selectors:
        m = _MEMORY.search(sel)
        if m:
            need = max(need, _quantity(m.group("q")))
            continue
        p = _PROFILE.search(sel)
        if p:
            profile = p.group("p")
            continue
        return None  # some other CEL: not modelled
    whole, partitions = _modelled_classes()
    if class_name in whole and profile is None:
        return Option("full", "", count, need)
    if class_name in partitions and profile is not None:
        return Option("mig", profile, count, need)
    return None


@functools.cache
def _modelled_classes() -> tuple[frozenset[str], frozenset[str]]:
    """The whole-GPU and partition DeviceClasses of the vendors whose partition geometry the bound models (the
    vendors with partition profiles: NVIDIA's MIG); another vendor's claims count as fitting."""
    modelled = [v for v in vendors.all() if v.partition_profiles()]
    return (
        frozenset(v.gpu_class for v in modelled),
        frozenset(v.partition_class for v in modelled if v.partition_class),
    )


def pod_shape(sp: SimPod, mode: str) -> tuple[Option, ...] | None:
    """The pod's GPU demand as alternatives; () without GPU; None when the model cannot express it."""
    if mode == DP:
        res = [(k, v) for k, v in sp.requests.items() if is_gpu_resource(k) and v > 0]
        if not res:
            return ()
        if len(res) > 1:
            return None
        return (Option("res", res[0][0], res[0][1]),)
    claims = [c for c in sp.claims]
    if sp.extra.get("ext_claim") is not None:
        claims.append(sp.extra["ext_claim"])
    requests = [r for c in claims for r in c.spec.requests]
    if not requests:
        return ()
    if len(requests) > 1 or any(c.spec.constraints for c in claims):
        return None
    r = requests[0]
    if r.exactly is not None:
        if r.exactly.allocation_mode != "ExactCount":
            return None
        opt = _dra_option(r.exactly.device_class_name, r.exactly.selectors, r.exactly.count)
        return (opt,) if opt is not None else None
    opts = []
    for sub in r.first_available:
        opt = _dra_option(sub.device_class_name, sub.selectors, sub.count)
        if opt is None:
            return None
        opts.append(opt)
    return tuple(opts)


def _profiles_by_product() -> dict[str, dict[str, tuple[int, int, int, int]]]:
    return {product: profiles for v in vendors.all() for product, profiles in v.partition_profiles().items()}


def dra_gpus(view: ClusterView) -> dict[str, list[Gpu]]:
    """Per node, its GPUs as the DRA view publishes them (whole device, MIG profiles, static instances)."""
    catalogue = _profiles_by_product()
    gpus: dict[str, dict[str, Gpu]] = {}
    for s in view.slices:
        for d in s.devices:
            info = view.devices.get((s.driver, s.pool.name, d.name))
            if info is None:
                continue
            g = gpus.setdefault(info.node, {}).setdefault(info.gpu, Gpu(full=False, memory=0))
            typ = d.attributes.get("type")
            if typ is None or typ.value != "mig":
                g.full = True
                g.memory = max(g.memory, info.memory)
                continue
            prof = d.attributes.get("profile")
            product = d.attributes.get("productName")
            name = str(prof.value) if prof is not None else d.name
            known = catalogue.get(str(product.value) if product is not None else "", {}).get(name)
            g.memory = max(g.memory, info.memory)
            if d.consumes_counters:  # dynamic MIG: any instance mix the slices allow
                if known is not None:
                    g.profiles[name] = (known[0], known[1], known[2], info.memory)
            else:  # static MIG: the instances that exist
                g.fixed = g.fixed or {}
                g.fixed[name] = g.fixed.get(name, 0) + 1
                g.profiles[name] = (1, 1, 99, info.memory)
    return {n: list(v.values()) for n, v in gpus.items()}


def problem(sim: Simulation, mode: str, result: ModeResult) -> Problem:
    view = sim.cluster.views[mode]
    shapes: dict[tuple[Option, ...], Shape] = {}
    assumed = 0
    for sp in result.sim_pods:
        if sp.extra.get("blocked"):
            continue  # can never be scheduled (missing PodGroup, not expressible): not counted
        shape = pod_shape(sp, mode)
        if not shape:
            assumed += 1
            continue
        shapes.setdefault(shape, Shape(shape)).pods += 1
    if mode == DP:
        units = {n.name: gpu_allocatable(n, view.release) for n in view.nodes}
        return Problem(list(shapes.values()), {}, units, assumed)
    return Problem(list(shapes.values()), dra_gpus(view), {}, assumed)


def solve(p: Problem, time_limit: float = TIME_LIMIT_S) -> tuple[int, bool, float]:  # noqa: C901 - builds one CP-SAT model: variables, constraints and objective together
    """(pods placed at best incl. assumed ones, proven optimal, seconds)."""

    from ortools.sat.python import cp_model  # noqa: PLC0415

    m = cp_model.CpModel()
    nodes = sorted(set(p.gpus) | set(p.units))
    placed: dict[str, list[tuple[Any, Option]]] = {n: [] for n in nodes}  # node -> (pods var, option)
    total: list[Any] = []
    for si, shape in enumerate(p.shapes):
        vars_: list[Any] = []
        for n in nodes:
            for oi, opt in enumerate(shape.options):
                if _usable(p, n, opt):
                    v = m.new_int_var(0, shape.pods, f"y{si}_{n}_{oi}")
                    placed[n].append((v, opt))
                    vars_.append(v)
        if vars_:
            m.add(sum(vars_) <= shape.pods)
            total += vars_
    for n in nodes:
        here = placed[n]
        if not here:
            continue
        if n in p.units:
            for res, cap in p.units[n].items():
                use = [v * opt.count for v, opt in here if opt.name == res]
                if use:
                    m.add(sum(use) <= cap)
            continue
        whole: list[tuple[Any, int]] = []  # (used-whole var, memory)
        inst: dict[str, list[tuple[Any, int]]] = {}  # profile -> (instances var, memory)
        for gi, g in enumerate(p.gpus.get(n, [])):
            f = m.new_bool_var(f"f_{n}_{gi}") if g.full else None
            if f is not None:
                whole.append((f, g.memory))
            mem: list[Any] = [f * MEMORY_SLICES] if f is not None else []
            comp: list[Any] = [f * COMPUTE_SLICES] if f is not None else []
            for name, (gs, size, mx, memory) in g.profiles.items():
                if g.fixed is not None:  # static MIG: at most the instances that exist, none if used whole
                    x = m.new_int_var(0, g.fixed.get(name, 0), f"x_{n}_{gi}_{name}")
                    if f is not None:
                        m.add(x == 0).only_enforce_if(f)
                else:
                    x = m.new_int_var(0, mx, f"x_{n}_{gi}_{name}")
                    mem.append(x * size)
                    comp.append(x * gs)
                inst.setdefault(name, []).append((x, memory))
            if g.fixed is None and g.profiles:
                m.add(sum(mem) <= MEMORY_SLICES)
                m.add(sum(comp) <= COMPUTE_SLICES)
        # whole-GPU pods: for every memory need, the pods needing at least that fit the GPUs that have it
        full = [(v * opt.count, opt.need) for v, opt in here if opt.kind == "full"]
        for need in {nd for _, nd in full}:
            m.add(sum(x for x, nd in full if nd >= need) <= sum(f for f, mem in whole if mem >= need))
        for name in {opt.name for _, opt in here if opt.kind == "mig"}:
            mig = [(v * opt.count, opt.need) for v, opt in here if opt.kind == "mig" and opt.name == name]
            for need in {nd for _, nd in mig}:
                m.add(
                    sum(x for x, nd in mig if nd >= need)
                    <= sum(x for x, mem in inst.get(name, []) if mem >= need)
                )
    m.maximize(sum(total) if total else 0)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 2
    start = time.perf_counter()
    status = solver.solve(m)
    seconds = time.perf_counter() - start
    if status == cp_model.OPTIMAL:
        return round(solver.objective_value) + p.assumed, True, seconds
    if status == cp_model.FEASIBLE:
        return int(solver.best_objective_bound) + p.assumed, False, seconds
    return sum(s.pods for s in p.shapes) + p.assumed, False, seconds  # nothing proven: the trivial bound


def _usable(p: Problem, node: str, opt: Option) -> bool:
    if opt.kind == "res":
        return p.units.get(node, {}).get(opt.name, 0) >= opt.count
    gpus = p.gpus.get(node, [])
    if opt.kind == "full":
        return sum(1 for g in gpus if g.full and g.memory >= opt.need) >= opt.count
    return any(opt.name in g.profiles and g.profiles[opt.name][3] >= opt.need for g in gpus)


def available() -> bool:
    return importlib.util.find_spec("ortools") is not None


def bounds(sim: Simulation, time_limit: float = TIME_LIMIT_S) -> list[str]:
    """One line per mode: the bound next to what first-fit placed."""
    if not available():
        raise UsageError(
            "--bound needs the optional ortools package: pip install 'kubedra[bound]' (about 250 MB)"
        )
    out = []
    for mode, result in sim.results.items():
        p = problem(sim, mode, result)
        value, optimal, seconds = solve(p, time_limit)
        total = sum(1 for sp in result.sim_pods if not sp.extra.get("blocked"))
        b = Bound(mode, min(value, total), optimal, result.placed, total, p.assumed, seconds)
        out.append(b.line())
    return out
