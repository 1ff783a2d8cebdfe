"""Where Go-built binaries kubedra can use live: the testbed's cache directory.

``make testbed`` builds kube-apiserver, kube-scheduler, kube-controller-manager, the testbed launcher, the
allocator oracle and ``helm`` into ``${KUBEDRA_CACHE:-~/.cache/kubedra}/testbed/<version>/bin``;
``KUBEDRA_TESTBED_BIN`` overrides that directory (a binary set built elsewhere). Nothing here downloads.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$KUBEDRA_CACHE``, or ``~/.cache/kubedra``."""
    env = os.environ.get("KUBEDRA_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kubedra"


def bin_dir(version: str) -> Path:
    """The directory the testbed Makefile builds into for Kubernetes ``version`` (a minor such as 1.37)."""
    env = os.environ.get("KUBEDRA_TESTBED_BIN")
    if env:
        return Path(env)
    return cache_dir() / "testbed" / version / "bin"


def executable(path: Path) -> Path | None:
    return path if path.is_file() and os.access(path, os.X_OK) else None


def find_any(name: str) -> Path | None:
    """Binary ``name`` from ``KUBEDRA_TESTBED_BIN`` or from any built version, newest minor first."""
    env = os.environ.get("KUBEDRA_TESTBED_BIN")
    if env:
        return executable(Path(env) / name)
    root = cache_dir() / "testbed"
    if not root.is_dir():
        return None

    def minor(p: Path) -> tuple[int, ...]:
        try:
            return tuple(int(x) for x in p.name.split("."))
        except ValueError:
            return (-1,)

    for version in sorted(root.iterdir(), key=minor, reverse=True):
        found = executable(version / "bin" / name)
        if found:
            return found
    return None
