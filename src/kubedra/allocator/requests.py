"""A claim's requests normalised for the search, and the search's bookkeeping records (upstream's
requestAccessor, requestData, deviceWithID, deviceRollbackState)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubedra.allocator.pools import Pool
from kubedra.allocator.state import DeviceID
from kubedra.k8s.quantity import Quantity
from kubedra.model.objects import (
    ALLOCATION_MODE_EXACT,
    Device,
    DeviceClass,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
)


def claim_ref(claim: ResourceClaim) -> str:
    return f"{claim.meta.namespace}/{claim.meta.name}" if claim.meta.namespace else claim.meta.name


@dataclass
class Req:
    """A request or one subrequest, normalised (upstream's requestAccessor)."""

    name: str  # own name
    parent: str  # parent request name for a subrequest, "" otherwise
    class_name: str
    selectors: list[str]
    mode: str
    count: int
    admin: bool
    has_admin: bool
    tolerations: list[DeviceToleration]
    capacity: dict[str, Quantity] | None

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


@dataclass
class ReqData:
    req: Req
    cls: DeviceClass | None
    num: int = 0
    all_devices: list[Dev] = field(default_factory=list)
    selected_sub: int = 0  # only on the entry with sub index 0 of a firstAvailable request
    is_sub: bool = False
    sel_key: tuple[Any, ...] | None = None  # (class name, request selectors): key of the selectable cache
    scans: int = 0  # how often the search scanned the candidates for this request
    # indices of the selectable candidates, once known for all of them without an error (see _scan_order)
    order: list[int] | None = None


@dataclass(slots=True)
class Dev:
    id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool


@dataclass
class Rollback:
    """What ``_allocate_device`` has reserved so far (upstream's ``deviceRollbackState``)."""

    constraints_added: int = 0
    marked: bool = False
    capacity: dict[str, Quantity] | None = None
    capacity_existed: bool = False


@dataclass(slots=True)
class DeviceResult:
    req: Req
    dev: Dev
    share_id: str | None
    consumed: dict[str, Quantity] | None
    admin: bool | None


def requests_of(claim: ResourceClaim) -> list[list[Req]]:
    """One list per request: [exact] or the subrequests in order."""
    out: list[list[Req]] = []
    for r in claim.spec.requests:
        if r.first_available:
            out.append(
                [
                    Req(
                        s.name,
                        r.name,
                        s.device_class_name,
                        s.selectors,
                        s.allocation_mode,
                        s.count,
                        False,
                        False,
                        s.tolerations,
                        s.capacity,
                    )
                    for s in r.first_available
                ]
            )
        elif r.exactly is not None:
            e = r.exactly
            out.append(
                [
                    Req(
                        r.name,
                        "",
                        e.device_class_name,
                        e.selectors,
                        e.allocation_mode,
                        e.count,
                        bool(e.admin_access),
                        e.admin_access is not None,
                        e.tolerations,
                        e.capacity,
                    )
                ]
            )
        else:  # neither set: upstream sees an exact request with an empty class name
            out.append([Req(r.name, "", "", [], ALLOCATION_MODE_EXACT, 0, False, False, [], None)])
    return out
