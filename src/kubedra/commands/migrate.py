"""``kubedra migrate``: rewrite manifests to DRA resource.k8s.io/v1, keeping comments and formatting."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kubedra.commands._common import (
    CommonOptions,
    exit_codes_epilog,
    input_options,
    output_option,
    target_version_option,
)
from kubedra.commands._next import hint
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, InputError, UsageError
from kubedra.k8s.versions import supported_range
from kubedra.report.output import emit, print_table
from kubedra.text import count

if TYPE_CHECKING:
    from kubedra.migrate.context import MigrateOptions


@dataclass(frozen=True)
class MigrateCommandOptions:
    """``kubedra migrate``'s options as parsed: inputs, -o and --target-version in ``common``, where the result
    goes (--out, --in-place, --diff), and the rewrite's own flags, from which :meth:`engine_options` builds the
    use case's :class:`kubedra.migrate.context.MigrateOptions`."""

    common: CommonOptions
    out_dir: str | None = None
    force: bool = False
    in_place: bool = False
    show_diff: bool = False
    gpu_strategy: str = "claim-template"
    sharing: str | None = None
    min_memory: str | None = None
    prefer: str | None = None
    interval: str = "Default"
    no_gang: bool = False
    no_validate: bool = False
    show_changes: bool = True

    @classmethod
    def complete(cls, params: dict[str, Any]) -> MigrateCommandOptions:
        return cls(common=CommonOptions.take(params), **params)

    def engine_options(self) -> MigrateOptions:
        """The rewrite's options (``--sharing`` parsed, ``--prefer`` split); a bad --sharing is a usage error."""
        from kubedra.migrate.context import MigrateOptions, Sharing

        prefer = self.prefer
        return MigrateOptions(
            target_version=self.common.target_version,
            gpu_strategy=self.gpu_strategy,
            sharing=Sharing.parse(self.sharing) if self.sharing else None,
            min_memory=self.min_memory,
            prefer=tuple(p.strip() for p in prefer.split(",") if p.strip()) if prefer else (),
            interval=self.interval,
            gang=not self.no_gang,
        )

    def validate(self) -> None:
        modes = [
            m
            for m, on in (
                ("--out", self.out_dir is not None),
                ("--in-place", self.in_place),
                ("--diff", self.show_diff),
            )
            if on
        ]
        if len(modes) > 1:
            raise UsageError(f"{' and '.join(modes)} cannot be combined")
        if self.in_place and "-" in self.common.files:
            raise UsageError("--in-place cannot rewrite stdin")
        self.engine_options()
        if self.force and self.out_dir is None:
            raise UsageError("--force only applies to --out")


def _diff(name: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(True),
            after.splitlines(True),
            fromfile=f"a/{name.lstrip('/')}",
            tofile=f"b/{name.lstrip('/')}",
        )
    )


def _out_paths(paths: tuple[str, ...], files: list[str], out: str) -> dict[str, str]:
    """Where each input lands under ``--out``: paths relative to the folder given, or the file name."""
    roots = [(Path(p), Path(p).is_dir()) for p in paths if p != "-"]
    mapping: dict[str, str] = {}
    for f in files:
        fp = Path(f)
        rel: Path | None = None
        for root, is_dir in roots:
            if is_dir:
                try:
                    rel = fp.relative_to(root)
                    break
                except ValueError:
                    continue
            elif fp == root:
                rel = Path(fp.name)
                break
        if rel is None:
            rel = Path(fp.name if f != "<stdin>" else "stdin.yaml")
        target = str(Path(out) / rel)
        if target in mapping.values():
            raise UsageError(f"--out: two inputs would both be written to {target}")
        mapping[f] = target
    return mapping


def _check_out(paths: tuple[str, ...], out: str, targets: dict[str, str], force: bool) -> None:
    """Refuse an --out that overlaps an input (equal, inside it, or holding it) and, without --force, one
    that already holds a file the migration would write."""
    o = Path(os.path.realpath(out))
    for p in paths:
        if p == "-":
            continue
        r = Path(os.path.realpath(p))
        if o == r or o.is_relative_to(r) or r.is_relative_to(o):
            raise UsageError(f"--out {out} overlaps the input {p}: write the migrated files somewhere else")
    if not force:
        existing = [t for t in targets.values() if os.path.lexists(t)]
        if existing:
            more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
            raise UsageError(f"--out: {existing[0]} already exists{more}; pass --force to overwrite")


def _write_out(out: str, files: dict[str, str], force: bool) -> None:
    """Write the migration under ``out``: all or nothing.

    A new ``out`` is built completely as a temporary folder beside it and renamed into place at the end. Into
    an existing ``out`` (``--force``) every file is first written as a temporary beside its target, then all
    are renamed; a failure before the renames leaves the old files as they were (new subfolders may stay)."""
    from kubedra.safewrite import TEMP_PREFIX, remove_stale_temps, temp_name, terminate_cleanly, write_files

    if os.path.lexists(out):
        if not os.path.isdir(out):
            raise UsageError(f"--out {out}: exists and is not a folder")
        write_files(files, overwrite_readonly=force, make_folders=True)
        return
    parent = os.path.dirname(os.path.abspath(out))
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create folder {parent}: {e.strerror}") from e
    remove_stale_temps(parent)
    tmp = temp_name(parent)
    assert os.path.basename(tmp).startswith(TEMP_PREFIX)
    with terminate_cleanly():
        try:
            os.mkdir(tmp)
            inside = {os.path.join(tmp, os.path.relpath(t, out)): text for t, text in files.items()}
            write_files(inside, make_folders=True)
            os.rename(tmp, out)
        except OSError as e:
            raise InputError(f"cannot write {e.filename or out}: {e.strerror}") from e
        finally:
            if os.path.lexists(tmp):
                import shutil

                shutil.rmtree(tmp, ignore_errors=True)


def _table(report: Any, show_changes: bool, *, err: bool) -> None:
    from kubedra.k8s.findings import object_text

    rows = []
    for f in report.findings:
        if f.severity == "change" and not show_changes:
            continue
        rows.append([f.where, object_text(f.object), f.severity.upper(), f.message])
    files = len(report.files)
    changed = sum(1 for r in report.files if r.changed)
    new = sum(r.new_objects for r in report.files)
    if rows:
        print_table(["SOURCE", "OBJECT", "LEVEL", "MESSAGE"], rows, err=err)
    summary = (
        f"{count(files, 'file')}, {changed} changed, {count(new, 'new object')}, "
        f"{count(len(report.manual), 'manual item')} "
        f"at target {report.target_version}"
    )
    if report.validation is not None:
        errs = report.validation.get("errors", [])
        unchecked = report.validation.get("notSchemaChecked", [])
        if errs:
            summary += f"; output INVALID ({count(len(errs), 'error')})"
        elif report.validation.get("valid"):
            summary += "; output valid"
        else:  # never "valid" over what was not checked: custom resources whose CRD kubedra does not bundle
            summary += f"; output not schema-checked: {', '.join(unchecked)}"
    click.echo(summary, err=True)


@click.command(
    "migrate",
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "everything migrated and the output valid (custom resources whose CRD kubedra does not bundle "
            "are passed through unchanged: the summary and JSON validation.notSchemaChecked name them)",
            EXIT_FINDINGS: "manual items remain or the output does not validate (migrated files are still written)",
            EXIT_INPUT: "usage or input error, or no manifests in the inputs (nothing written)",
        }
    ),
)
@input_options(missing="no input: give PATH... or -f PATH (- for stdin) to migrate")
@target_version_option(help=f"Kubernetes minor to migrate to ({supported_range()}).")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False), help="Write the migrated files under DIR."
)
@click.option(
    "--force", is_flag=True, help="With --out: overwrite files that already exist there (read-only ones too)."
)
@click.option(
    "--in-place", is_flag=True, help="Rewrite the files themselves (atomically, only if nothing failed)."
)
@click.option(
    "--diff", "show_diff", is_flag=True, help="Print a unified diff and write nothing (the default)."
)
@click.option(
    "--gpu-strategy",
    type=click.Choice(["claim-template", "extended-resource"]),
    default="claim-template",
    show_default=True,
    help="Rewrite device-plugin GPU requests into claims, or keep them and map them with a DeviceClass (KEP-5004).",
)
@click.option(
    "--sharing",
    help="exclusive | time-slicing | mps | mig:<profile> for whole-GPU requests (a manual item for a vendor whose "
    "DRA driver has no sharing config).",
)
@click.option("--min-memory", help="Only GPUs with at least this much memory (e.g. 40Gi).")
@click.option(
    "--prefer", help="Comma-separated GPU models in order of preference (firstAvailable), e.g. H100,A100."
)
@click.option(
    "--interval",
    type=click.Choice(["Default", "Short", "Medium", "Long"]),
    default="Default",
    show_default=True,
    help="Time-slicing interval for generated GpuConfig.",
)
@click.option(
    "--no-gang",
    is_flag=True,
    help="Do not turn gangs (Volcano minAvailable, Kubeflow, JobSet) into PodGroups.",
)
@click.option("--no-validate", is_flag=True, help="Skip validating the migrated output.")
@click.option(
    "--show-changes/--hide-changes", default=True, help="List every change in the table, not only warnings."
)
@output_option()
def migrate(**params: Any) -> None:
    """Rewrite manifests to DRA resource.k8s.io/v1 for --target-version.

    Device-plugin requests (nvidia.com/gpu, MIG, time-slicing ConfigMaps) become claims and DeviceClasses,
    older DRA versions become v1, gangs become PodGroups. Comments, key order, quoting and block scalars
    survive; untouched documents stay byte-identical; running it twice changes nothing.

    \b
    Output: with one input from stdin the migrated YAML goes to stdout (pipe it to kubectl apply -f -);
    otherwise a unified diff (--diff, the default), or files (--out DIR, --in-place). The table of
    changes and manual items goes to stderr whenever stdout carries YAML or a diff.
    """
    options = MigrateCommandOptions.complete(params)
    options.validate()
    run(options)


def run(command: MigrateCommandOptions) -> None:
    from kubedra.migrate.engine import Migrator, attach_validation, load_sources
    from kubedra.validate.engine import validate_texts

    files, output = command.common.files, command.common.output
    out_dir, force, in_place, show_diff = command.out_dir, command.force, command.in_place, command.show_diff
    options = command.engine_options()
    migrator = Migrator(options)
    sources = load_sources(files)
    if not any(s.doc is None or any(c.body.strip() for c in s.doc.chunks) for s in sources):
        # nothing read is not "everything migrated and valid" (templates and charts are reported, so they count)
        shown = ", ".join("<stdin>" if f == "-" else f for f in files)
        raise InputError(f"no manifests found in {shown}: nothing to migrate")
    targets: dict[str, str] = {}
    if out_dir is not None:  # checked before any work, so a refused --out costs nothing
        targets = _out_paths(files, [s.name for s in sources], out_dir)
        _check_out(files, out_dir, targets, force)
    report = migrator.migrate(sources)
    if not command.no_validate:
        attach_validation(report, validate_texts)
    stdin_only = files == ("-",)
    data = report.to_dict()
    if out_dir is not None:
        # an unrendered template is not a manifest: reported as a manual item, never copied into the output
        _write_out(out_dir, {targets[r.file]: r.output for r in report.files if not r.template}, force)
    elif in_place:
        from kubedra.safewrite import write_files

        write_files({r.file: r.output for r in report.files if r.changed})
    elif stdin_only and not show_diff and output in ("table", "wide"):
        click.echo(report.files[0].output if report.files and not report.files[0].template else "", nl=False)
    else:
        diffs = {r.file: _diff(r.file, r.original, r.output) for r in report.files if r.changed}
        if output in ("table", "wide"):
            for text in diffs.values():
                click.echo(text, nl=False)
        else:
            for f in data["files"]:
                f["diff"] = diffs.get(f["file"], "")
    if output in ("table", "wide"):
        # stdout carries the artefact (YAML or diff); the report goes to stderr unless files were written
        _table(report, command.show_changes, err=out_dir is None and not in_place)
    else:
        emit(data, output)
    if out_dir is not None:
        hint(
            output,
            "check the migrated files at the target",
            ["validate", out_dir, "--target-version", command.common.target_version],
        )
    # an error in the output is something wrong (1); custom resources with no schema were passed through as
    # they came (migrate changes none of them) and are named in the summary and JSON validation
    invalid = report.validation is not None and bool(report.validation.get("errors"))
    click.get_current_context().exit(EXIT_FINDINGS if report.manual or invalid else EXIT_OK)
