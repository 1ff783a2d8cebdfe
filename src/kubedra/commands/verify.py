"""``kubedra verify``: check a cluster after a migration wave (live, or a snapshot with -f)."""

from __future__ import annotations

import datetime as dt
import re
import sys
from dataclasses import dataclass
from typing import Any

import click

from kubedra.commands._cluster import (
    allow_missing_option,
    report_incomplete,
    snapshot_incomplete,
    time_options,
)
from kubedra.commands._common import (
    TABLE_FORMATS,
    CommonOptions,
    cluster_options,
    exit_codes_epilog,
    input_options,
    metrics_file_option,
    output_option,
    target_version_option,
)
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, UsageError
from kubedra.gcpause import paused_gc
from kubedra.k8s.versions import supported_range

_DURATION = re.compile(r"^(\d+)(s|m|h)$")


def parse_duration(text: str) -> dt.timedelta:
    m = _DURATION.match(text.strip())
    if not m:
        raise UsageError(f"invalid duration {text!r} (expected e.g. 90s, 10m, 2h)")
    n, unit = int(m.group(1)), m.group(2)
    return dt.timedelta(seconds=n * {"s": 1, "m": 60, "h": 3600}[unit])


@dataclass(frozen=True)
class VerifyOptions:
    """``kubedra verify``'s options as parsed (a snapshot file as input, -o, --kubeconfig/--context in
    ``common``); the durations are checked by :meth:`validate` and read with :meth:`window` and :meth:`grace`."""

    common: CommonOptions
    baseline: str | None = None
    since: str = "10m"
    pending_grace: str = "5m"
    allow_missing: tuple[str, ...] = ()
    timeout: float = 30.0
    metrics_file: str | None = None

    @classmethod
    def complete(cls, params: dict[str, Any]) -> VerifyOptions:
        return cls(common=CommonOptions.take(params), **params)

    @property
    def snapshot_file(self) -> str | None:
        return self.common.files[0] if self.common.files else None

    def window(self) -> dt.timedelta:
        return parse_duration(self.since)

    def grace(self) -> dt.timedelta:
        return parse_duration(self.pending_grace)

    def validate(self) -> None:
        c = self.common
        if len(c.files) > 1:
            raise UsageError("verify checks one snapshot at a time (give one SNAPSHOT)")
        self.window()
        self.grace()
        if self.snapshot_file and (c.context or c.kubeconfig):
            raise UsageError("-f SNAPSHOT and --context/--kubeconfig are exclusive")


@click.command(
    "verify",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "every check passed (warnings allowed) or had nothing to check (it says so, not PASS; JSON "
            "status nothing-to-check); the verdict is NOTHING CHECKED (JSON nothingChecked: "
            "true, and a warning) when no check had anything to look at",
            EXIT_FINDINGS: "a check failed, also when some reads failed (what was found wins)",
            EXIT_INPUT: "usage or input error, or unreachable cluster; or incomplete with no check failed: a read was forbidden, "
            "unauthorised, not served or failed (live, or when the snapshot was taken) and not accepted with "
            "--allow-missing (checks still printed, JSON lists them under incomplete, stderr names them)",
        }
    ),
)
@input_options(required=False, help="Check this snapshot file (kubedra snapshot) instead of a live cluster.")
@cluster_options(context_help="Kubeconfig context to check (default: the current context).")
@click.option(
    "--baseline", metavar="SNAPSHOT", help="Snapshot from before the wave: no GPU workload may be lost."
)
@click.option("--since", default="10m", show_default=True, help="Window for DRA error events (e.g. 30m, 2h).")
@click.option(
    "--pending-grace",
    default="5m",
    show_default=True,
    help="A GPU pod Pending longer than this fails the check.",
)
@target_version_option(
    default=None,
    help="Judge what depends on the Kubernetes release (a DeviceTaintRule without deviceSelector, the driver "
    "release preflight) as at this minor, e.g. the one an upgrade goes to, instead of the cluster's own version "
    f"({supported_range()}).",
)
@output_option((*TABLE_FORMATS, "markdown", "prometheus"))
@metrics_file_option()
@allow_missing_option()
@time_options()
def verify(**params: Any) -> None:
    """Check a cluster after a wave: every ResourceClaim allocated and reserved, pods with claims Running,
    DRA driver kubelet-plugin pods Ready, each GPU node's ResourceSlices matching its GPUs, no DRA error
    events in the last --since, device taints and health, and no GPU workload lost or stuck Pending compared
    with --baseline.
    """
    options = VerifyOptions.complete(params)
    options.validate()
    run(options)


def run(options: VerifyOptions) -> None:
    from kubedra.model import snapshot as snapfmt
    from kubedra.report import output as out
    from kubedra.verify import checks as vc
    from kubedra.verify.podshare import PodShare

    common = options.common
    output, baseline, metrics_file = common.output, options.baseline, options.metrics_file
    snapshot_file, window, grace = options.snapshot_file, options.window(), options.grace()
    target: str | None = common.target_version or None  # absent (None): the cluster's own version
    # one short-lived process: no cyclic collection while the snapshot is read and checked (a large one is a
    # million acyclic objects that each collection would rescan: 16 s of CPU instead of 4 at 500 nodes)
    with paused_gc(freeze=True):
        base = snapfmt.load(baseline, kinds=vc.KINDS, slim=PodShare()) if baseline else None
        if snapshot_file:
            state = snapfmt.load(snapshot_file, kinds=vc.KINDS, slim=PodShare())
            now = vc.parse_time(state.header.captured_at) or dt.datetime.now(dt.UTC)
        else:
            from kubedra.snapshot import capture

            ctx = capture.resolve_context(common.kubeconfig, common.context)
            state = capture.capture(common.kubeconfig, ctx, timeout=options.timeout, helm_releases=False)
            now = dt.datetime.now(dt.UTC)
        results = vc.run_checks(
            state, baseline=base, now=now, since=window, pending_grace=grace, release=target
        )
    summ = vc.summary(results)
    incomplete = snapshot_incomplete(state.header.cluster, state.header.not_inspected, options.allow_missing)
    data: dict[str, Any] = {
        "cluster": state.header.cluster,
        "serverVersion": state.header.server_version,
        **({"targetVersion": target} if target else {}),
        "at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "baseline": baseline,
        "checks": [c.to_dict() for c in results],
        "summary": summ,
        "incomplete": incomplete,
    }
    # every check had nothing to look at: 'OK' would be a pass over nothing (a cluster not migrated yet, a wrong
    # context). It is said so, not as a failure: the chart runs verify on a schedule from before the first wave.
    nothing = not any(c.checked for c in results)
    if nothing:
        data["nothingChecked"] = True
    if output == "prometheus" or metrics_file:
        from kubedra.report import metrics
        from kubedra.verify.counts import dra_counts

        registry = metrics.verify_registry(data, dra_counts(state))
        if metrics_file:
            metrics.write_textfile(metrics_file, registry)
    if output == "prometheus":
        click.echo(metrics.exposition(registry), nl=False)
    elif output == "json":
        click.echo(out.to_json(data), nl=False)
    elif output == "yaml":
        click.echo(out.to_yaml(data), nl=False)
    else:
        rows = []
        for c in results:
            msgs = c.messages or ["ok" if c.checked else "-"]
            status = "nothing to check" if c.status == vc.NOTHING else c.status.upper()
            for i, m in enumerate(msgs):
                rows.append((status if i == 0 else "", c.title if i == 0 else "", m))
        if output == "markdown":
            click.echo(out.markdown_table(("Status", "Check", "Detail"), rows), nl=False)
        else:
            out.print_table(("Status", "Check", "Detail"), rows, title=f"verify {state.header.cluster}")
        verdict = (
            "FAILED"
            if summ["failed"]
            else "INCOMPLETE"
            if incomplete
            else "NOTHING CHECKED"
            if nothing
            else "OK"
        )
        click.echo(
            f"{verdict}: {summ['passed']} passed, {summ['warnings']} with warnings, {summ['failed']} failed, "
            f"{summ['nothingToCheck']} with nothing to check"
        )
    report_incomplete(incomplete)
    if nothing:
        click.echo(
            f"kubedra: warning: nothing to verify in {state.header.cluster or 'the snapshot'}: no GPU node on DRA, "
            "no ResourceClaim, no Pending GPU pod and no --baseline to compare with (is this the right --context "
            "or snapshot?)",
            err=True,
        )
    # a failed check is the answer (1) even when some reads failed; incomplete is exit 2 only when none failed
    if summ["failed"]:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_INPUT if incomplete else EXIT_OK)
