"""The DRA structured allocator (upstream ``k8s.io/dynamic-resource-allocation/structured``) in Python.

from kubedra.allocator import Allocator, AllocatedState, AllocationError, Features
alloc = Allocator(features=Features(...), classes=[...], slices=[...], allocated=AllocatedState(...))
results = alloc.allocate(node, claims)   # list[AllocationResult] | None; raises AllocationError
"""

from kubedra.allocator.core import Allocator
from kubedra.allocator.errors import (
    FILTER_TIMEOUT,
    AllocationError,
    AllocationTimeout,
    FailedOnNodeError,
    InvalidPoolsError,
    PoolOrderPanicError,
    UpstreamPanicError,
)
from kubedra.allocator.selectors import SelectorError, SelectorMatcher
from kubedra.allocator.state import AllocatedState, DeviceID, Features, device_id_str, parse_device_id
from kubedra.allocator.taints import apply_taint_rules

__all__ = [
    "FILTER_TIMEOUT",
    "AllocatedState",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "DeviceID",
    "FailedOnNodeError",
    "Features",
    "InvalidPoolsError",
    "PoolOrderPanicError",
    "SelectorError",
    "SelectorMatcher",
    "UpstreamPanicError",
    "apply_taint_rules",
    "device_id_str",
    "parse_device_id",
]
