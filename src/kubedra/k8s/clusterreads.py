"""What kubedra lists from a live cluster, per reader (``data/cluster-reads.yaml``): one list the audit, the
snapshot and the shipped ClusterRole agree on."""

from __future__ import annotations

import functools

from kubedra.k8s import datafiles


@functools.cache
def resources(reader: str) -> tuple[tuple[str, str], ...]:
    """(API group, resource) pairs ``reader`` (``audit`` or ``snapshot``) lists; "" is the core group."""
    return tuple((str(g), str(r)) for g, r in datafiles.load("cluster-reads.yaml")[reader])
