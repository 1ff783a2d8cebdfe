"""The ``kubedra`` command line.

Each verb lives in ``kubedra.commands.<verb>`` and is imported only when it runs, so ``kubedra --help``
stays fast and a verb's heavy dependencies (kubernetes client, ruamel, rich) load only when needed.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any, NoReturn

import click

from kubedra import __version__, gcpause
from kubedra.errors import EXIT_BROKEN_PIPE, EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, KubedraError

# verb -> (module, attribute, one-line help). Keep alphabetical; add a line to register a verb.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "allocate": (
        "kubedra.commands.allocate",
        "allocate",
        "Allocate ResourceClaims on nodes like kube-scheduler.",
    ),
    "audit": ("kubedra.commands.audit", "audit", "Report what breaks at the target Kubernetes version."),
    "completion": (
        "kubedra.commands.completion",
        "completion",
        "Print the shell completion script (bash, zsh, fish).",
    ),
    "demo": ("kubedra.commands.demo", "demo", "Device plugin vs DRA on a built-in example cluster."),
    "discover": (
        "kubedra.commands.discover",
        "discover",
        "Build the ResourceSlices a GPU vendor's DRA driver would publish.",
    ),
    "explain": ("kubedra.commands.explain", "explain", "Explain why a claim can or cannot be allocated."),
    "migrate": ("kubedra.commands.migrate", "migrate", "Rewrite manifests to DRA resource.k8s.io/v1."),
    "plan": ("kubedra.commands.plan", "plan", "Plan the rollout in waves, with a runbook."),
    "policy": ("kubedra.commands.policy", "policy", "Generate and test ValidatingAdmissionPolicies."),
    "simulate": ("kubedra.commands.simulate", "simulate", "Simulate scheduling: device plugin vs DRA."),
    "snapshot": ("kubedra.commands.snapshot", "snapshot", "Capture a cluster read-only into one file."),
    "validate": ("kubedra.commands.validate", "validate", "Validate manifests at the target version."),
    "verify": ("kubedra.commands.verify", "verify", "Check a cluster after a migration wave."),
}


def _available() -> dict[str, tuple[str, str, str]]:
    out = {}
    for name, spec in COMMANDS.items():
        if importlib.util.find_spec(spec[0]) is not None:
            out[name] = spec
    return out


class Interrupted(Exception):
    """Ctrl-C while a verb ran. click turns a KeyboardInterrupt into ``Abort`` (which cannot be told apart from
    a refused prompt) when it runs without standalone mode; a plain exception passes through it untouched."""


class LazyGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted() from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_available())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = _available().get(cmd_name)
        if spec is None:
            return None
        module = importlib.import_module(spec[0])
        cmd: click.Command = getattr(module, spec[1])
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, spec[2]) for name, spec in sorted(_available().items())]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kubedra")
def cli() -> None:
    """kubedra: migrate a GPU fleet from the NVIDIA device plugin to Kubernetes DRA, and prove each step.

    Exit codes: 0 ok, 1 the check found something, 2 usage or input error, 3 internal error (a bug),
    130 interrupted; each verb's --help lists its own (docs/exit-codes.md).
    """


def _one_line(text: str) -> str:
    """An error message on one line (a library's multi-line message joined with '; ')."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _stdout_closed() -> None:
    """The reader of stdout went away (``kubedra audit | head -0``): the artefact was not delivered. Point
    stdout at /dev/null so the interpreter's final flush cannot fail, and exit EXIT_BROKEN_PIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(EXIT_BROKEN_PIPE)


def _interrupted(closed: bool = False) -> NoReturn:
    """Ctrl-C: one line on stderr, exit 130 (128 + SIGINT, as a shell reports it). On a terminal the line
    starts on its own line, after the ``^C`` the terminal echoed (click already ended that line when
    ``closed``); piped, stderr holds exactly the one line."""
    try:
        lead = "" if closed or not sys.stderr.isatty() else "\n"
        click.echo(f"{lead}kubedra: interrupted", err=True)
    except (OSError, ValueError):
        pass
    sys.exit(EXIT_INTERRUPTED)


def main(argv: list[str] | None = None, prog_name: str = "kubedra") -> Any:
    """Entry point: one clear line and exit code 2 on bad input, never a traceback. Without ``argv`` it is the
    program itself (the console script, ``python -m kubedra``): a verb that said it has written everything
    (:func:`kubedra.gcpause.nothing_left_to_free`) then ends the process without freeing what it built."""
    gcpause.ending_at_once_allowed(reset=True)
    try:
        return _flushed(argv, prog_name)
    except SystemExit as e:
        if argv is None and (e.code is None or isinstance(e.code, int)) and gcpause.ending_at_once_allowed():
            gcpause.end_at_once(e.code)
        raise


def _flushed(argv: list[str] | None, prog_name: str) -> Any:
    try:
        return _main(argv, prog_name)
    finally:
        # click answers EPIPE by swapping stdout for a wrapper that swallows it and exiting 1; the artefact
        # is complete only once it reached stdout's reader
        if type(sys.stdout).__name__ == "_PacifyFlushWrapper":
            _stdout_closed()  # replaces the exit code in flight
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _stdout_closed()


def _main(argv: list[str] | None, prog_name: str = "kubedra") -> Any:
    try:
        rv = cli.main(args=argv, prog_name=prog_name, standalone_mode=False)
        if isinstance(rv, int):  # ctx.exit(code) comes back as a return value without standalone mode
            sys.exit(rv)
        return rv
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except Interrupted:
        _interrupted()
    except click.Abort as e:
        if isinstance(e.__cause__, KeyboardInterrupt):  # Ctrl-C while click parsed the command line
            _interrupted(closed=True)
        click.echo("kubedra: aborted", err=True)
        sys.exit(EXIT_INPUT)
    except click.ClickException as e:
        e.show()
        sys.exit(EXIT_INPUT)
    except KubedraError as e:
        click.echo(f"kubedra: error: {_one_line(str(e))}", err=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        _interrupted()
    except BrokenPipeError:
        _stdout_closed()
    except Exception as e:  # an internal bug must still not dump a traceback on users
        if os.environ.get("KUBEDRA_DEBUG"):
            raise
        click.echo(
            f"kubedra: internal error: {type(e).__name__}: {_one_line(str(e))} (set KUBEDRA_DEBUG=1 for a traceback)",
            err=True,
        )
        sys.exit(EXIT_INTERNAL)
