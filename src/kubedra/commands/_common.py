"""The one option set every verb shares, defined once (kubectl's grammar).

- Inputs: positional ``PATH...`` and repeatable ``-f/--filename PATH`` mean the same (files, folders read
  recursively, ``-`` for stdin); :func:`input_options` merges both into one ``files`` parameter.
- ``-o/--output``: ``table`` (one line per item), ``wide`` (more columns), ``json``, ``yaml`` and the formats
  a verb has besides (:func:`output_option`).
- ``--target-version`` (validated against ``kubedra.k8s.versions``), ``--feature-gates``,
  ``--kubeconfig``/``--context``.
- Exit codes: :func:`exit_codes_epilog` prints each verb's codes in its ``--help``.

Each verb follows kubectl's Options/Complete/Validate/Run pattern: click parses the flags, ``XOptions.complete``
turns click's parameters into one frozen dataclass (the shared ones in :class:`CommonOptions`), ``validate``
raises :class:`~kubedra.errors.UsageError` (exit 2) for flags that conflict, and ``run(options)`` does the work.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import click

from kubedra.errors import EXIT_BROKEN_PIPE, EXIT_INTERNAL, EXIT_INTERRUPTED, UsageError
from kubedra.k8s.versions import DEFAULT_TARGET, SUPPORTED, check_target, supported_range

INPUT_HELP = "File, folder (read recursively) or - for stdin; repeatable, same as positional PATHs."

# -o values every table verb offers; a verb adds its own (markdown, csv, sarif, html...).
TABLE_FORMATS = ("table", "wide", "json", "yaml")

# Exit codes any verb can return besides its own 0/1/2 (kubedra.errors, kubedra.cli.main).
SHARED_EXIT_CODES = {
    EXIT_INTERNAL: "internal error: a bug in kubedra; KUBEDRA_DEBUG=1 shows the traceback",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_BROKEN_PIPE: "stdout was closed before the output was written (e.g. | head -0)",
}

F = Callable[..., Any]


@dataclass(frozen=True)
class CommonOptions:
    """The options every verb shares, as parsed: inputs (positional PATHs and ``-f``, merged), ``-o``,
    ``--target-version`` and the cluster flags (``--kubeconfig``, ``--context``, repeatable on some verbs).
    A verb's options dataclass holds one as ``common``; a verb without one of these flags keeps its default."""

    files: tuple[str, ...] = ()
    output: str = "table"
    target_version: str = DEFAULT_TARGET
    kubeconfig: str | None = None
    contexts: tuple[str, ...] = ()

    @property
    def context(self) -> str | None:
        """The one ``--context`` of a verb that reads a single cluster (None: the kubeconfig's current one)."""
        return self.contexts[0] if self.contexts else None

    @classmethod
    def take(cls, params: MutableMapping[str, Any], *, context: str = "context") -> CommonOptions:
        """Remove the shared options from click's ``params`` (a verb's ``**params``) and return them;
        ``context`` names the parameter that holds ``--context`` on this verb."""
        ctx = params.pop(context, None)
        return cls(
            files=tuple(params.pop("files", ())),
            output=params.pop("output", cls.output),
            target_version=params.pop("target_version", cls.target_version),
            kubeconfig=params.pop("kubeconfig", None),
            contexts=tuple(ctx) if isinstance(ctx, (tuple, list)) else ((ctx,) if ctx else ()),
        )


def input_options(
    required: bool = True, *, missing: str | None = None, help: str = INPUT_HELP
) -> Callable[[F], F]:
    """Positional ``PATH...`` plus ``-f/--filename PATH`` (repeatable), passed on as one ``files`` tuple.

    ``required``: no input at all is a usage error (exit 2) with ``missing`` as its message.
    """

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(
            *args: Any, paths: tuple[str, ...] = (), filenames: tuple[str, ...] = (), **kw: Any
        ) -> Any:
            files = tuple(paths) + tuple(filenames)
            if required and not files:
                raise UsageError(missing or "no input: give PATH... or -f PATH (- for stdin)")
            return f(*args, files=files, **kw)

        wrapper = click.option("-f", "--filename", "filenames", multiple=True, metavar="PATH", help=help)(
            wrapper
        )
        wrapper = click.argument("paths", nargs=-1, metavar="[PATH]...")(wrapper)
        wrapper = click.option(
            "--skip-unreadable",
            is_flag=True,
            expose_value=False,
            callback=_set_skip_unreadable,
            help="Warn about unreadable paths and special files (FIFOs, devices) in input folders and go on "
            "(default: exit 2).",
        )(wrapper)
        return wrapper

    return decorate


def _set_skip_unreadable(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    from kubedra.sources import reading

    reading.SKIP_UNREADABLE = bool(value)
    return value


def metrics_file_option() -> Callable[[F], F]:
    """``--metrics-file PATH``: also write the run's Prometheus metrics there (node-exporter textfile collector)."""
    return click.option(
        "--metrics-file",
        metavar="PATH",
        help="Also write Prometheus metrics to PATH (written whole, then renamed: for node-exporter's "
        "textfile collector, e.g. /var/lib/node_exporter/kubedra.prom).",
    )


def output_option(
    choices: Sequence[str] = TABLE_FORMATS, default: str | None = None, help: str = "Output format."
) -> Callable[[F], F]:
    """``-o/--output``; wherever a verb prints a table it also takes ``wide`` (more columns)."""
    values = list(dict.fromkeys(choices))
    if "table" in values and "wide" not in values:
        values.insert(values.index("table") + 1, "wide")
    return click.option(
        "-o",
        "--output",
        "output",
        type=click.Choice(values),
        default=default or values[0],
        show_default=True,
        help=help,
    )


def _target_callback(partial_ok: bool) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        version, warning = check_target(value, partial_ok=partial_ok)  # UsageError: one line, exit 2
        if warning:
            warn(warning)
        return version

    return callback


def target_version_option(
    *, partial_ok: bool = False, help: str | None = None, default: str | None = DEFAULT_TARGET
) -> Callable[[F], F]:
    """``--target-version``: a supported minor (exit 2 naming the range otherwise); with ``partial_ok``
    (audit) a partly known minor is accepted with a warning. ``default=None``: absent means the verb's own
    answer (verify: the cluster's version)."""
    return click.option(
        "--target-version",
        default=default,
        show_default=default is not None,
        callback=_target_callback(partial_ok),
        shell_complete=lambda ctx, param, incomplete: [v for v in SUPPORTED if v.startswith(incomplete)],
        help=help or f"Kubernetes minor release to target ({supported_range()}).",
    )


def _driver_version_callback(
    all_default: bool, keep_all: bool = False
) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        from kubedra import vendors

        if value is None:
            return None
        if all_default and value == "all":
            return "all" if keep_all else None
        errors = []
        for vendor in vendors.all():
            if vendor.driver_releases:  # a vendor none of whose releases kubedra has read has none to name
                try:
                    return vendor.resolve_driver_release(value)
                except ValueError as e:
                    errors.append(str(e))
        raise click.BadParameter("; ".join(errors)) from None

    return callback


def driver_version_option(*, all_default: bool, help: str, keep_all: bool = False) -> Callable[[F], F]:
    """``--driver-version``: a DRA driver release kubedra has read (of a vendor that has any) (exit 2 naming them otherwise);
    with ``all_default`` its absence (or ``all``) means every release read, passed on as None; with ``keep_all``
    too, ``all`` is passed on as "all" (audit: absent means the releases the cluster runs)."""
    return click.option(
        "--driver-version",
        default=None,
        metavar="VERSION" + ("|all" if all_default else ""),
        callback=_driver_version_callback(all_default, keep_all),
        help=help,
    )


def feature_gates_option() -> Callable[[F], F]:
    return click.option(
        "--feature-gates",
        default=None,
        metavar="A=true,B=false",
        help="Override feature-gate defaults of the target version, like kube-scheduler's flag.",
    )


def kubeconfig_option(
    help: str = "Kubeconfig file (default: $KUBECONFIG or ~/.kube/config).",
) -> Callable[[F], F]:
    return click.option("--kubeconfig", metavar="FILE", help=help)


def context_option(
    *,
    multiple: bool = False,
    dest: str = "context",
    help: str = "Kubeconfig context (default: the current one).",
) -> Callable[[F], F]:
    return click.option("--context", dest, multiple=multiple, metavar="NAME", help=help)


def cluster_options(
    *, multiple_contexts: bool = False, context_dest: str = "context", context_help: str | None = None
) -> Callable[[F], F]:
    """``--kubeconfig FILE`` and ``--context NAME`` (repeatable where a verb reads several clusters)."""

    def decorate(f: F) -> F:
        f = context_option(
            multiple=multiple_contexts,
            dest=context_dest,
            **({"help": context_help} if context_help else {}),
        )(f)
        return kubeconfig_option()(f)

    return decorate


def exit_codes_epilog(codes: Mapping[int, str]) -> str:
    """The ``--help`` epilog listing every exit code a verb can return: its own meanings of 0-2, then the
    codes every verb shares (internal error, interrupted)."""
    lines = ["\b", "Exit codes:"]
    for code, text in sorted({**codes, **SHARED_EXIT_CODES}.items()):
        lines.append(f"  {code:<3} {text}")
    return "\n".join(lines)


def warn(message: str) -> None:
    click.echo(f"kubedra: warning: {message}", err=True)
