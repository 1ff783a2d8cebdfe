"""Errors a user can act on, and the exit codes every verb shares.

Exit codes (stable, like Pluto/kubectl habits):
  0  success, nothing at or above the failure threshold
  1  the check found something (claim not allocatable, findings, invalid manifests)
  2  usage or input error (bad flag, malformed YAML, unknown kind, unreachable cluster)
  3  internal error: a bug in kubedra (one line on stderr; KUBEDRA_DEBUG=1 shows the traceback)
  130  interrupted (Ctrl-C)
  141  stdout was closed before the output was written (e.g. `| head -0`)
Each verb lists the codes it returns in its ``--help`` (docs/exit-codes.md has the table).
"""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # stdout's reader went away (128 + SIGPIPE, as a shell reports `yes | head`)


@dataclass(frozen=True, slots=True)
class Location:
    """Where an object or value came from: a file and 1-based line, or a cluster (slotted: every modelled
    object of a large snapshot has one)."""

    file: str | None = None
    line: int | None = None
    cluster: str | None = None

    def __str__(self) -> str:
        if self.file is not None:
            return f"{self.file}:{self.line}" if self.line else self.file
        if self.cluster is not None:
            return f"cluster {self.cluster}"
        return "<input>"

    def to_dict(self) -> dict[str, object]:
        if self.file is not None:
            return {"file": self.file, "line": self.line}
        return {"cluster": self.cluster}


class KubedraError(Exception):
    """Base class: an error that is printed as one line and maps to an exit code."""

    exit_code = EXIT_INPUT

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is not None:
            return f"{self.location}: {self.message}"
        return self.message


class InputError(KubedraError):
    """Malformed or unsupported input (YAML syntax, unknown kind, bad quantity, bad CEL...)."""


class UsageError(KubedraError):
    """Bad combination of flags or arguments."""


class ClusterError(KubedraError):
    """A cluster could not be reached or refused a request."""
