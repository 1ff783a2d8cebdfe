"""Fixtures for tests that need the Go testbed: a real control plane, fake GPU nodes, the allocator oracle.

Binaries come from ``make testbed`` (cache dir, see kubedra.testing.binaries). When they are missing
the tests skip with the command to run, except under CI (``CI=true``) where a missing testbed fails.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from kubedra.k8s import versions
from kubedra.testing import binaries, fakecluster
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.oracle import Oracle
from kubedra.testing.require import unavailable

_group_counter = itertools.count()


def require_testbed(*names: str, version: str = binaries.DEFAULT_VERSION) -> None:
    """Skip (developer machine) or fail (CI) unless the named testbed binaries are built."""
    missing = [n for n in names if binaries.find(n, version) is None]
    if not missing:
        return
    if binaries.go_available():
        hint = (
            "make testbed"
            if version == binaries.DEFAULT_VERSION
            else f"make -C testbed K8S_VERSION={version}"
        )
        why = f"run `{hint}` to build them"
    else:
        why = "no Go toolchain on PATH (install Go to build the testbed)"
    message = f"testbed binaries missing in {binaries.bin_dir(version)} ({', '.join(missing)}): {why}"
    unavailable(message)


@pytest.fixture(scope="session")
def controlplane() -> Iterator[ControlPlane]:
    """A Kubernetes 1.37 control plane (etcd, apiserver, controller-manager, scheduler), shared by the session."""
    require_testbed(*binaries.KUBERNETES, binaries.LAUNCHER)
    yield from _running(ControlPlane("1.37"))


def _running(cp: ControlPlane) -> Iterator[ControlPlane]:
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="module")
def workload_controlplane() -> Iterator[ControlPlane]:
    """A second 1.37 control plane with the gang-scheduling/Workload API gates on (module-scoped)."""
    require_testbed(*binaries.KUBERNETES, binaries.LAUNCHER)
    yield from _running(ControlPlane("1.37", workload=True))


# The testbed's releases other than the default one (data/versions.yaml testbed: 1.36, 1.35, 1.34 and the 1.38
# pre-release):
# suites that check a per-release fact against a real apiserver or scheduler run once per release.
OTHER_RELEASES = [v for v in versions.testbed() if v != binaries.DEFAULT_VERSION]


@pytest.fixture(scope="session", params=OTHER_RELEASES)
def release_controlplane(request: pytest.FixtureRequest) -> Iterator[ControlPlane]:
    """A control plane of each testbed release besides the default, shared by the session like
    ``controlplane``: pytest groups the tests that use it by release, so each release starts once and the
    next one starts when the last test of the one before has run (one of them alive at a time). The tests
    share it as they share the 1.37 one: each works in its own namespace, node group or object names.
    `make testbed` builds them all, so under CI each runs, and a missing one fails."""
    version: str = request.param
    require_testbed(*binaries.KUBERNETES, binaries.LAUNCHER, version=version)
    cp = ControlPlane(version)
    _release_planes[version] = cp
    try:
        yield from _running(cp)
    finally:
        del _release_planes[version]


# Each release's plane, while it runs, and the last test (in run order) that uses it: the session would keep the
# last release's plane running to its end; it stops once its last test is torn down.
_release_planes: dict[str, ControlPlane] = {}
_last_release_test: dict[str, str] = {}


@pytest.hookimpl(trylast=True)  # after pytest has grouped the tests by release and deselected by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _last_release_test.clear()
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "release_controlplane" in callspec.params:
            _last_release_test[callspec.params["release_controlplane"]] = item.nodeid


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield  # the test's own fixtures first: they delete their objects through the plane
    callspec = getattr(item, "callspec", None)
    version = callspec.params.get("release_controlplane") if callspec is not None else None
    if version in _release_planes and _last_release_test.get(version) == item.nodeid:
        _release_planes[version].stop()  # stop() is idempotent: the fixture's own stop at the end is a no-op


GpuCluster = Callable[..., list[str]]


@pytest.fixture(scope="session")
def gpu_cluster(controlplane: ControlPlane) -> GpuCluster:
    """Factory: ``gpu_cluster("h100-80gb", 2)`` adds 2 fake nodes of that shape to the session's control
    plane and returns their names; ``dra=False`` makes device-plugin nodes. Each call gets its own node
    group (label ``kubedra.dev/testbed-group``, also the name prefix), so tests can pin pods to theirs."""

    def make(shape: str, count: int = 1, dra: bool = True) -> list[str]:
        prefix = f"{shape}-{'dra' if dra else 'dp'}-g{next(_group_counter)}"
        return fakecluster.add_gpu_nodes(controlplane.api, shape, count, prefix=prefix, dra=dra)

    return make


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    """The upstream allocator (k8s.io/dynamic-resource-allocation/structured v0.37) as ``kubedra-oracle``."""
    require_testbed(binaries.ORACLE)
    return Oracle(version="1.37")
