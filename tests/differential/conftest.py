"""Fixtures for the differential tests: the upstream allocator as ``kubedra-oracle`` (``make testbed``).

Like tests/integration: a missing oracle skips the tests on a developer machine and fails them under CI.
"""

from __future__ import annotations

import pytest

from kubedra.testing import binaries
from kubedra.testing.oracle import Oracle
from kubedra.testing.require import unavailable


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    """The upstream allocator (k8s.io/dynamic-resource-allocation/structured v0.37) as ``kubedra-oracle``."""
    if binaries.find(binaries.ORACLE, "1.37") is None:
        message = (
            f"{binaries.ORACLE} is not built in {binaries.bin_dir('1.37')}: run `make testbed` (needs Go)"
        )
        unavailable(message)
    return Oracle(version="1.37")
