"""``kubedra simulate``: device plugin vs DRA, side by side, on a whole cluster."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import click

from kubedra import vendors
from kubedra.commands._common import (
    TABLE_FORMATS,
    CommonOptions,
    exit_codes_epilog,
    feature_gates_option,
    input_options,
    output_option,
    target_version_option,
    warn,
)
from kubedra.commands._next import hint
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, InputError, UsageError
from kubedra.gcpause import paused_gc
from kubedra.k8s.quantity import QuantityError, parse_quantity
from kubedra.report.output import emit, to_yaml, write_atomic
from kubedra.scheduler.sampling import ADAPTIVE
from kubedra.simulate.cluster import DP, DRA, MAX_NODES, MAX_PODS, MODES, ClusterOptions
from kubedra.simulate.results import Simulation
from kubedra.simulate.run import SCORINGS, SimulateOptions
from kubedra.text import count

MODE_CHOICES = ("both", DP, DRA)


def parse_memory(text: str | None, flag: str = "--gpu-memory") -> int | None:
    if text is None:
        return None
    try:
        q = parse_quantity(text)
    except QuantityError as e:
        raise UsageError(f"{flag} {text}: {e}") from None
    if q.nanos <= 0:
        raise UsageError(f"{flag} must be positive")
    return q.value()


def build_options(  # noqa: PLR0913 - one keyword per CLI option
    *,
    mode: str,
    nodes: str | None,
    gpu_mode: str | None,
    dp_gpu_mode: str | None,
    target_version: str,
    feature_gates: str | None,
    scoring: str,
    dra_sizing: str,
    gpu_memory: str | None,
    sharing: str | None,
    preemption: bool,
    max_pods: int = MAX_PODS,
    max_nodes: int = MAX_NODES,
    percentage_of_nodes_to_score: int = ADAPTIVE,
) -> SimulateOptions:
    modes = MODES if mode == "both" else (mode,)
    if (gpu_mode or dp_gpu_mode) and not nodes and dp_gpu_mode:
        raise UsageError("--dp-gpu-mode shapes a generated cluster: use it with --nodes")
    for m in (gpu_mode, dp_gpu_mode, sharing):
        problem = vendors.mode_problem(m) if m else None
        if problem:
            raise InputError(problem)
    if sharing and all(v.claim_sharing(sharing) is None for v in vendors.all()):
        raise UsageError(f"--sharing {sharing}: expected time-slicing:<pods per GPU> or mps:<pods per GPU>")
    return SimulateOptions(
        modes=modes,
        target_version=target_version,
        feature_gates=feature_gates,
        scoring=scoring,
        sizing=dra_sizing,
        gpu_memory=parse_memory(gpu_memory),
        sharing=sharing or None,
        preemption=preemption,
        cluster=ClusterOptions(nodes=nodes, gpu_mode=gpu_mode, dp_gpu_mode=dp_gpu_mode, max_nodes=max_nodes),
        max_pods=max_pods,
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
    )


@dataclass(frozen=True)
class SimulateCommandOptions:
    """``kubedra simulate``'s options as parsed: inputs, -o and --target-version in ``common``, the simulation's
    flags (from which :meth:`engine_options` builds the use case's :class:`SimulateOptions`) and the outputs."""

    common: CommonOptions
    mode: str = "both"
    nodes: str | None = None
    gpu_mode: str | None = None
    dp_gpu_mode: str | None = None
    dra_sizing: str = "gpu"
    gpu_memory: str | None = None
    sharing: str | None = None
    scoring: str = "LeastAllocated"
    no_preemption: bool = False
    percentage_of_nodes_to_score: int = ADAPTIVE
    max_pods: int = MAX_PODS
    max_nodes: int = MAX_NODES
    feature_gates: str | None = None
    chart: str | None = None
    bound: bool = False
    save_cluster: str | None = None
    fail_on_pending: bool = False
    show_pods: bool = False
    html_file: str | None = None

    @classmethod
    def complete(cls, params: dict[str, Any]) -> SimulateCommandOptions:
        return cls(common=CommonOptions.take(params), **params)

    def engine_options(self) -> SimulateOptions:
        """The simulation's options (usage errors, exit 2, for GPU modes, --sharing and --gpu-memory)."""
        return build_options(
            mode=self.mode,
            nodes=self.nodes,
            gpu_mode=self.gpu_mode,
            dp_gpu_mode=self.dp_gpu_mode,
            target_version=self.common.target_version,
            feature_gates=self.feature_gates,
            scoring=self.scoring,
            dra_sizing=self.dra_sizing,
            gpu_memory=self.gpu_memory,
            sharing=self.sharing,
            preemption=not self.no_preemption,
            max_pods=self.max_pods,
            max_nodes=self.max_nodes,
            percentage_of_nodes_to_score=self.percentage_of_nodes_to_score,
        )

    def validate(self) -> None:
        self.engine_options()
        if self.chart:
            from kubedra.report.simulate_chart import check_chart_path

            check_chart_path(self.chart)


def write_cluster(sim: Simulation, path: str) -> None:
    """Both views (device-plugin Nodes, then the DRA view), as YAML that ``-f`` reads back."""
    docs: list[Any] = []
    for mode, view in sim.cluster.views.items():
        objs = view.all_objects()
        if objs:
            docs.append((mode, objs))
    if not docs:
        raise UsageError("--save-cluster: nothing was generated or derived (the cluster came from the input)")
    parts = ["# kubedra simulate --save-cluster: the cluster as each view sees it\n"]
    for mode, objs in docs:
        parts.append(f"# --- {mode} view ---\n")
        for o in objs:
            parts.append("---\n" + to_yaml(o))
    write_atomic(path, "".join(parts))


def report(
    sim: Simulation,
    opts: SimulateOptions,
    output: str,
    *,
    chart: str | None = None,
    bound: bool = False,
    preface: Sequence[str] = (),
) -> None:
    """Print the result in the chosen format, write the chart; warnings go to stderr."""

    extra: list[str] = []
    if bound:
        from kubedra.simulate.bound import bounds

        for line in bounds(sim):
            extra.append(line)
    if chart:
        from kubedra.report.simulate_chart import write_chart

        write_chart(sim, chart)
        written = f"chart written to {chart}"
        extra.append(written)
    if output in ("table", "wide", "markdown"):
        from kubedra.report.simulate_text import text

        if preface:
            click.echo("".join(preface), nl=False)
        click.echo(
            text(sim, opts.target_version, opts.scoring, markdown=output == "markdown", extra=extra),
            nl=False,
        )
        return
    for s in sim.skipped:
        warn(f"not simulated: {s}")
    for n in [*sim.notes, *(e for e in extra if not chart or e != written)]:
        warn(n)
    if chart:  # information, not a warning
        click.echo(f"kubedra: {written}", err=True)
    emit(sim.to_dict(), output)


def simulation_options(f: Any) -> Any:
    options: list[Any] = [
        click.option(
            "--mode",
            type=click.Choice(MODE_CHOICES),
            default="both",
            show_default=True,
            help="Simulate with the device plugin, with DRA, or both side by side.",
        ),
        click.option(
            "--nodes",
            default=None,
            metavar="SPEC",
            help="Generate the cluster from the node catalogue, e.g. 4x8xH100-80GB,2x8xA100-80GB.",
        ),
        click.option(
            "--gpu-mode",
            default=None,
            metavar="MODE",
            help="GPU set-up of generated (or derived DRA) nodes: full, mig-static:<layout>, "
            "mig-dynamic, time-slicing:<n>, mps:<n> (a MIG mode for a generated GPU without MIG is refused); "
            "for AMD nodes a partition mode <compute>_<memory>: spx_nps1 (whole GPUs, their default), cpx_nps4...",
        ),
        click.option(
            "--dp-gpu-mode",
            default=None,
            metavar="MODE",
            help="GPU set-up of the device-plugin side when it differs (default: --gpu-mode; "
            "full for mig-dynamic, which the device plugin cannot do).",
        ),
        click.option(
            "--dra-sizing",
            type=click.Choice(["gpu", "mig"]),
            default="gpu",
            show_default=True,
            help="DRA version of pods that ask the device plugin for whole GPUs: whole GPUs, or the smallest MIG "
            "profile holding "
            "the pod's declared memory (annotation kubedra.io/gpu-memory or --gpu-memory).",
        ),
        click.option(
            "--gpu-memory",
            default=None,
            metavar="QTY",
            help="GPU memory per GPU for pods without the kubedra.io/gpu-memory annotation.",
        ),
        click.option(
            "--sharing",
            default=None,
            metavar="time-slicing:N|mps:N",
            help="DRA version: every N pods of a workload share one claim (one GPU), like replicas.",
        ),
        click.option(
            "--scoring",
            type=click.Choice(list(SCORINGS)),
            default="LeastAllocated",
            show_default=True,
            help="NodeResourcesFit scoring strategy (MostAllocated packs nodes).",
        ),
        click.option("--no-preemption", "no_preemption", is_flag=True, help="Disable DefaultPreemption."),
        click.option(
            "--percentage-of-nodes-to-score",
            type=click.IntRange(0, 100),
            default=ADAPTIVE,
            show_default=True,
            help="KubeSchedulerConfiguration percentageOfNodesToScore: each pod is scored on the first this-% "
            "feasible nodes from where the previous pod stopped (at least 100). 0: kube-scheduler's adaptive "
            "default, 50% - nodes/125, at least 5%.",
        ),
        click.option(
            "--max-pods",
            type=click.IntRange(min=1),
            default=MAX_PODS,
            show_default=True,
            help="Refuse (exit 2) workloads that expand to more pods (Kubernetes' own limit is 150,000).",
        ),
        click.option(
            "--max-nodes",
            type=click.IntRange(min=1),
            default=MAX_NODES,
            show_default=True,
            help="Refuse (exit 2) a --nodes spec with more nodes (Kubernetes' own limit is 5,000).",
        ),
        target_version_option(),
        feature_gates_option(),
        click.option(
            "--chart",
            default=None,
            metavar="FILE",
            help="Write GPU and GPU-memory use per node (.svg; .png with matplotlib).",
        ),
        click.option(
            "--bound", is_flag=True, help="Also compute how many pods fit at best (needs the ortools extra)."
        ),
        output_option((*TABLE_FORMATS, "markdown")),
    ]
    for opt in reversed(options):
        f = opt(f)
    return f


@click.command(
    "simulate",
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "the simulation ran (pending pods are part of the report)",
            EXIT_FINDINGS: "with --fail-on-pending: a pod stays pending with DRA (or in the only mode simulated), "
            "also when the simulation is incomplete (what was found wins)",
            EXIT_INPUT: "usage or input error; nothing to simulate (no manifests in the inputs); or incomplete, with nothing found: an input not read (a Helm "
            "template or chart), pods the apiserver refuses (an extended resource without limits, a pre-1.31 "
            "resourceClaims[].source, a workload at an apiVersion the target no longer serves such as "
            "extensions/v1beta1), an object not simulated (a KAI GPU fraction, a GPU in a custom "
            "resource's own fields, a TrainJob without its runtime, classic DRA, a fragment; a suspended job "
            "or a definition a later one replaces is not a gap), or a GPU node with no DRA view (its GPU "
            "model or MIG layout is not known). The report is printed, each under 'not simulated' (JSON "
            "skipped, notModelled), and stderr names them",
        }
    ),
)
@input_options(
    missing="no input: give PATH... or -f PATH (workloads, and the cluster unless --nodes generates it)",
    help="Cluster and workload manifests: file, folder (recursive) or - for stdin. Repeatable.",
)
@simulation_options
@click.option(
    "--save-cluster",
    default=None,
    metavar="FILE",
    help="Write the generated or derived cluster (both views) as YAML.",
)
@click.option(
    "--fail-on-pending",
    is_flag=True,
    help="Exit 1 when a pod stays pending with DRA (or in the only mode simulated).",
)
@click.option(
    "--pods",
    "show_pods",
    is_flag=True,
    help="Also list every pod with its node and devices (as -o wide does).",
)
@click.option("--html", "html_file", metavar="FILE", help="Also write a self-contained HTML report to FILE.")
def simulate(**params: Any) -> None:
    """Schedule the same workloads with the NVIDIA device plugin and with DRA, and compare.

    The cluster comes from the input (Nodes, ResourceSlices, DeviceClasses, DeviceTaintRules, bound Pods,
    allocated ResourceClaims) or from --nodes. Workloads (Pods, Deployments, StatefulSets, ReplicaSets,
    DaemonSets, Jobs, CronJobs, Kubeflow jobs, Volcano Jobs, Ray clusters, JobSets, LeaderWorkerSets) are
    expanded into pods; each pod gets a DRA and a device-plugin version.
    """
    options = SimulateCommandOptions.complete(params)
    options.validate()
    run(options)


def run(options: SimulateCommandOptions) -> None:
    from kubedra.simulate.inputs import load_inputs
    from kubedra.simulate.run import simulate as simulate_inputs

    files, output, chart = options.common.files, options.common.output, options.chart
    opts = options.engine_options()
    # One short-lived process: no cyclic collection at all between reading the input and printing the
    # report (the objects built are acyclic and live to the end; kubedra.gcpause has the figures).
    with paused_gc(freeze=True):
        inputs = load_inputs(files)
        shown = ", ".join("<stdin>" if f == "-" else f for f in files)
        if not inputs.documents and not inputs.skipped:  # nothing read is not "0 pods simulated", exit 0
            raise InputError(f"no manifests found in {shown}: nothing to simulate")
        sim = simulate_inputs(inputs, opts)
        if options.save_cluster:
            write_cluster(sim, options.save_cluster)
        report(sim, opts, output, chart=chart, bound=options.bound)
    if options.html_file:
        from kubedra.commands._record import run_record
        from kubedra.report.pages import write_simulation

        write_simulation(options.html_file, sim, run_record(files, opts.target_version))
    if (options.show_pods or output == "wide") and output in ("table", "wide"):
        from kubedra.report.simulate import pods_table

        click.echo("\n" + pods_table(sim), nl=False)
    # What was found wins; incomplete is never clean (docs/exit-codes.md): each gap is named on stderr, and
    # the exit is 1 for pending pods with --fail-on-pending, else 2 when something was not simulated, else 0
    _pending_hint(sim, output)
    gaps = _gaps(sim, inputs.not_read)
    if gaps:
        click.echo(f"kubedra: error: {'; '.join(gaps)}", err=True)
    last = sim.results[DRA] if DRA in sim.results else next(iter(sim.results.values()))
    if options.fail_on_pending and last.pending:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_INPUT if gaps else EXIT_OK)


def _pending_hint(sim: Simulation, output: str) -> None:
    """Where a pod stays pending with DRA: how to ask the cluster why, once the workload is deployed."""
    res = sim.results.get(DRA)
    pod = next((p for p in res.pods if not p.node), None) if res is not None else None
    if pod is not None:
        hint(
            output,
            "once deployed, ask the cluster why a pod stays pending",
            ["explain", f"pod/{pod.name}", "-n", pod.namespace or "default"],
        )


def _gaps(sim: Simulation, not_read: int) -> list[str]:
    """What makes the answer incomplete, one line each: inputs not read, pods the apiserver refuses, objects
    not simulated (a KAI fraction, a custom resource's hidden GPU, ...), GPU nodes without a DRA view."""
    out: list[str] = []
    if not_read:  # what was not read was not simulated
        out.append(
            f"{count(not_read, 'input')} not read (Helm templates or charts, under 'not simulated'): render "
            "them and simulate the output"
        )
    refused = [s for s in sim.skipped if s.refused]
    if refused:  # the apiserver refuses these pods: they were not placed, and the input cannot be applied
        out.append(
            f"{count(len(refused), 'pod template')} the apiserver refuses, not simulated (under 'not "
            f"simulated'), first: {refused[0]}"
        )
    other = [s for s in sim.skipped if not (s.not_read or s.refused or s.as_cluster)]
    if other:  # the cluster would run pods for these, but kubedra cannot tell which
        out.append(
            f"{count(len(other), 'object')} not simulated (under 'not simulated'), so the comparison is "
            f"incomplete; first: {other[0]}"
        )
    if sim.cluster.unmodelled:  # the DRA column lacks these nodes' GPUs
        names = list(sim.cluster.unmodelled)
        out.append(
            f"{count(len(names), 'GPU node')} without a DRA view ({', '.join(names[:5])}"
            f"{', ...' if len(names) > 5 else ''}), so the comparison is incomplete: add their ResourceSlices "
            "(kubectl get resourceslices -o yaml), or pass --gpu-mode when only the MIG layout is unknown"
        )
    return out
