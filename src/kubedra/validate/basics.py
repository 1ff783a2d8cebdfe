"""What the apiserver refuses (or warns about) in any object, beyond its OpenAPI schema: names that are not DNS
labels or subdomains, containers without an image, a Job's restartPolicy, server-populated metadata, negative
and fractional quantities."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubedra.k8s.podadmission import object_refusals
from kubedra.k8s.quantity import QuantityError, QuantityNotModelled, parse_quantity
from kubedra.validate.rules import Issue

Path = tuple[str | int, ...]


def apiserver_basics(obj: Mapping[str, Any]) -> list[Issue]:
    """What the apiserver refuses in any object and in every pod template, beyond the OpenAPI schema
    (:func:`kubedra.k8s.podadmission.object_refusals`, which simulate applies too)."""
    return [Issue(path, why) for path, why in object_refusals(obj)]


SERVER_FIELDS = ("resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink")


def server_fields(obj: Mapping[str, Any]) -> list[Issue]:
    """Fields the server sets: copied from ``kubectl get -o yaml`` they break or confuse an apply."""
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return []
    out: list[Issue] = []
    if meta.get("uid"):
        out.append(
            Issue(
                ("metadata", "uid"),
                "metadata.uid is set by the server; the apply fails unless this exact object exists (remove it)",
            )
        )
    present = [f for f in SERVER_FIELDS if meta.get(f) not in (None, "", [])]
    if present:
        out.append(
            Issue(
                ("metadata",),
                f"server-populated metadata ({', '.join(present)}); remove it before applying",
                True,
            )
        )
    return out


def negative(v: Any) -> str | None:
    """The apiserver's ValidateResourceQuantityValue: a request or limit below zero is refused."""
    try:
        negative = parse_quantity(v).sign() < 0
    except QuantityNotModelled:  # parsed but not built: non-zero, its sign is the text's (-1e999999999)
        negative = isinstance(v, str) and v.startswith("-")
    except QuantityError:
        return None
    return f"{v!r}: must be greater than or equal to 0" if negative else None


def whole(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None
