"""Which DeviceClass serves an extended resource a pod asks for (KEP-5004, DRAExtendedResource): every class by
its implicit name ``deviceclass.resource.kubernetes.io/<class>``, and a class's explicit ``extendedResourceName``,
where several classes claiming one name resolve to the newest ``creationTimestamp``, then the name (kube-scheduler
dynamicresources plugin)."""

from __future__ import annotations

from collections.abc import Iterable

from kubedra.model.objects import DeviceClass
from kubedra.scheduler.state import neg_key


def extended_resource_classes(classes: Iterable[DeviceClass]) -> dict[str, DeviceClass]:
    """resource name → DeviceClass; explicit names clash: newest creationTimestamp, then name, wins."""
    classes = list(classes)
    out: dict[str, DeviceClass] = {}
    for c in sorted(classes, key=lambda c: (c.meta.creation_timestamp, c.name)):
        out[f"deviceclass.resource.kubernetes.io/{c.name}"] = c
    explicit: dict[str, DeviceClass] = {}
    for c in classes:
        r = c.extended_resource_name
        if not r:
            continue
        cur = explicit.get(r)
        if cur is None or (c.meta.creation_timestamp, neg_key(c.name)) > (
            cur.meta.creation_timestamp,
            neg_key(cur.name),
        ):
            explicit[r] = c
    out.update(explicit)
    return out
