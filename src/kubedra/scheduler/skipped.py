"""What a simulation could not turn into pods, and why (:class:`Skipped`): workloads, pods and nodes."""

from __future__ import annotations

from dataclasses import dataclass

from kubedra.errors import Location


@dataclass(frozen=True)
class Skipped:
    """Something in the input that kubedra cannot turn into simulated pods, and why."""

    location: Location | None
    what: str
    reason: str
    not_read: bool = False  # an input that was not read at all (a Helm template or chart): incomplete
    refused: bool = False  # pods the apiserver refuses (kubedra.k8s.podadmission): never created, not placed
    # the cluster would run no pods for it either (a suspended job, a definition a later one replaces): the
    # simulation is complete without it; every other skip leaves the answer incomplete (exit 2)
    as_cluster: bool = False

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location is not None else ""
        return f"{where}{self.what}: {self.reason}"
