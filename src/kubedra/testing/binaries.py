"""Where the Go-built testbed binaries live, and finding them.

``make -C testbed`` (or ``make testbed`` at the top) builds kube-apiserver, kube-scheduler,
kube-controller-manager, the ``kubedra-testbed`` launcher (etcd, certificates), the ``kubedra-oracle``
allocator oracle and ``helm`` into a cache directory outside the clone:

    ${KUBEDRA_CACHE:-~/.cache/kubedra}/testbed/<version>/bin

``KUBEDRA_TESTBED_BIN`` overrides that directory (for a binary set built elsewhere).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.sources import binaries

DEFAULT_VERSION = DEFAULT_TARGET  # the testbed builds the release kubedra targets by default

# What `make -C testbed` puts into the bin dir.
KUBERNETES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
LAUNCHER = "kubedra-testbed"
ORACLE = "kubedra-oracle"
# helm (Go modules) and the peers built from their source in ../shared/peers (pluto; the developers' shared
# folder, in CI too) are built by `make testbed` into the default release's folder.
PEERS_SOURCE = Path(__file__).resolve().parents[3].parent / "shared" / "peers"


def peer_source(name: str) -> Path | None:
    """The source folder of peer ``name`` beside this checkout (``../shared/peers/<name>``), or None."""
    folder = PEERS_SOURCE / name
    return folder if (folder / "go.mod").is_file() else None


class TestbedMissing(RuntimeError):
    """A testbed binary is not built; the message says how to build it."""

    __test__ = False  # not a pytest test class despite the name


def cache_dir() -> Path:
    """``$KUBEDRA_CACHE``, or ``~/.cache/kubedra``."""
    return binaries.cache_dir()


def bin_dir(version: str = DEFAULT_VERSION) -> Path:
    """The directory the testbed Makefile builds into for Kubernetes ``version``."""
    return binaries.bin_dir(version)


def find(name: str, version: str = DEFAULT_VERSION) -> Path | None:
    """The path of testbed binary ``name`` (e.g. ``"helm"``, ``"kube-apiserver"``), or None when absent."""
    return binaries.executable(bin_dir(version) / name)


def require(name: str, version: str = DEFAULT_VERSION) -> Path:
    """Like :func:`find`, but raise :class:`TestbedMissing` naming the make command that builds it."""
    path = find(name, version)
    if path is None:
        hint = "make testbed" if version == DEFAULT_VERSION else f"make -C testbed K8S_VERSION={version}"
        raise TestbedMissing(f"{name} is not built in {bin_dir(version)}: run `{hint}` (needs Go)")
    return path


def go_available() -> bool:
    """Whether a Go toolchain is on PATH (needed to build the testbed)."""
    return shutil.which("go") is not None
