"""One reading of a device-plugin GPU request for every verb (audit, migrate, simulate, validate, plan, verify).

A container's ``nvidia.com/gpu`` (or MIG profile) value is a Kubernetes quantity, read with
:mod:`kubedra.k8s.quantity` exactly as the apiserver reads it: ``"0"``, ``"00"``, ``0`` and ``"0.0"`` are all zero,
``"2"`` and ``"2000m"`` are both two. The apiserver admits an extended resource only as a whole, non-negative
number (pkg/apis/core/validation ``validateResourceQuantityValue``: "must be an integer"), so anything else is
no count at all (``None``): the verbs report it instead of guessing. A zero request is no GPU: the container
gets no device, so no verb counts it, migrate writes no claim for it (a DRA request with ``count: 0`` is defaulted
to 1 by the apiserver, pkg/apis/resource/v1/defaults.go ``SetDefaults_ExactDeviceRequest``), and audit reports
nothing for it.
"""

from __future__ import annotations

from typing import Any

from kubedra.k8s import versions
from kubedra.k8s.podadmission import admitted, integer_resource_value
from kubedra.k8s.quantity import Quantity, QuantityError, parse_quantity
from kubedra.vendors import classify


def device_count(value: Any, release: str | None = None) -> int | None:
    """The number of devices a device-plugin resource value asks for; ``None`` when it is not a whole,
    non-negative quantity (the apiserver refuses it) or not a quantity at all (a Helm expression...).

    With ``release``, as that release reads it: admitted by its apiserver's integer test
    (:func:`kubedra.k8s.podadmission.integer_resource_value`) and counted by its ``Value()`` (kube-scheduler's
    NodeResourcesFit, the kubelet's device manager ``int(quantity.Value())``), so past int64 ``1e20`` is 0
    devices at 1.36/1.37 and MaxInt64 at 1.38; a count the release reads as negative (a wrap) is ``None``: no
    verb models what the kubelet makes of it. Without one, the exact value, whatever a release's int64 reads."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, Quantity):
        q = value
    else:
        try:
            q = parse_quantity(value.strip() if isinstance(value, str) else value)
        except QuantityError:
            return None
    if q.sign() < 0:
        return None
    if release is None:
        return q.value() if q.is_integer() else None
    if not integer_resource_value(q, release):
        return None
    since = versions.holds("quantity.nineteenDigitInt64", release)
    n = admitted(q, release).scaled_value(0, since)
    return n if n >= 0 else None


def is_zero(value: Any, release: str | None = None) -> bool:
    """A request for no device at all (``0``, ``"00"``, ``"0.0"``...; at 1.36/1.37 also ``1e20``, whose
    ``Value()`` reads 0 there: :func:`device_count`)."""
    return device_count(value, release) == 0


def admitted_counts(resources: Any, release: str | None = None) -> dict[str, int | None]:
    """Devices per extended resource of one container's ``resources`` as the apiserver admits them (every name in
    ``limits`` or ``requests``; the caller keeps the GPU ones). An extended resource is not overcommitable
    (pkg/apis/core/validation ``ValidateResourceRequirements``): its limit is what the container gets (the request
    is defaulted to it), so the count is the limit's; ``None`` where the apiserver refuses the container: only a
    request ("Limit must be set for non overcommitable resources"), a request unequal to the limit, or a value that
    is not a whole, non-negative quantity. Zero is no device (:func:`is_zero`). A ``resources`` that is not a
    mapping (an edited snapshot) holds nothing."""
    if not isinstance(resources, dict):
        return {}
    limits, requests = resources.get("limits"), resources.get("requests")
    limits = limits if isinstance(limits, dict) else {}
    requests = requests if isinstance(requests, dict) else {}
    out: dict[str, int | None] = {}
    for name in [*limits, *(r for r in requests if r not in limits)]:
        if name not in limits:
            out[str(name)] = None
            continue
        n = device_count(limits[name], release)
        out[str(name)] = None if name in requests and not _equal(requests[name], limits[name], release) else n
    return out


def _equal(request: Any, limit: Any, release: str | None) -> bool:
    """Requests "must be equal to" limits: as counts without a release, else ``Cmp`` of the values the release's
    apiserver holds (:func:`kubedra.k8s.podadmission.admitted`)."""
    if release is None:
        return device_count(request) == device_count(limit)
    try:
        a, b = (parse_quantity(v.strip() if isinstance(v, str) else v) for v in (request, limit))
    except QuantityError:
        return False
    return admitted(a, release) == admitted(b, release)


def asks_for_a_gpu(resources: Any, release: str | None = None) -> bool:
    """Whether one container's ``resources`` ask for any vendor's device-plugin GPU: a count that is not zero
    (:func:`admitted_counts`; one the apiserver would not admit, in an edited snapshot, still names a GPU)."""
    return any(
        n != 0 and classify(name) is not None for name, n in admitted_counts(resources, release).items()
    )
