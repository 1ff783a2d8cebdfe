"""``kubedra snapshot``: a read-only, scrubbed capture of one cluster into one file (see :mod:`.format`)."""

from kubedra.model.snapshot import (
    FORMAT,
    Header,
    HelmRelease,
    Snapshot,
    is_snapshot,
    load,
    read_header,
    write,
)

__all__ = ["FORMAT", "Header", "HelmRelease", "Snapshot", "is_snapshot", "load", "read_header", "write"]
