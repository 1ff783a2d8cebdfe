"""Which object a manifest names, as the apiserver keys it, and the objects defined more than once in the inputs.

The key is (API group, kind, namespace, name): the version is not part of it (``apps/v1`` and ``apps/v1beta2``
Deployments of one name are one object). A namespaced object without ``metadata.namespace`` lands in
``default`` (``kubectl apply`` without ``-n``); a cluster-scoped object has no namespace, whatever its manifest
says. Every verb that meets the same object twice in its inputs decides with this key: simulate and migrate
keep the later definition (as ``kubectl apply`` of both would), audit and validate name the definitions once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from kubedra.errors import Location
from kubedra.k8s import namespaces
from kubedra.k8s.workloads import api_group
from kubedra.sources.files import Document

# Built-in kinds that are not namespaced (``namespaced: false`` in the apiserver's API discovery), those
# kubedra's inputs carry. A custom kind is taken as namespaced unless listed.
CLUSTER_SCOPED = frozenset(
    {
        "Namespace",
        "Node",
        "PersistentVolume",
        "ClusterRole",
        "ClusterRoleBinding",
        "StorageClass",
        "CustomResourceDefinition",
        "DeviceClass",
        "ResourceSlice",
        "DeviceTaintRule",
        "PriorityClass",
        "RuntimeClass",
        "IngressClass",
        "CSIDriver",
        "CSINode",
        "VolumeAttachment",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "APIService",
        "CertificateSigningRequest",
        "FlowSchema",
        "PriorityLevelConfiguration",
    }
)

Key = tuple[str, str, str, str]
T = TypeVar("T")


def effective_namespace(kind: str, namespace: str | None) -> str:
    """The namespace an object of ``kind`` lands in: ``""`` for a cluster-scoped kind, else its own or
    ``default``."""
    return "" if kind in CLUSTER_SCOPED else namespaces.effective(namespace)


def object_key(api_version: str, kind: str, namespace: str | None, name: str) -> Key:
    """(API group, kind, effective namespace, name): one object of the apiserver."""
    return (api_group(api_version), kind, effective_namespace(kind, namespace), name)


def key_of(doc: Document) -> Key | None:
    """The object a document defines; None without a kind or ``metadata.name`` (``generateName`` makes a new
    object on every create, so two such documents are two objects)."""
    meta = doc.obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not doc.kind or not name or not isinstance(name, str):
        return None
    return object_key(doc.api_version, doc.kind, doc.namespace, name)


def duplicates(defined: Iterable[tuple[Key, Location, T]]) -> list[list[tuple[Location, T]]]:
    """The objects defined more than once, each as its definitions in input order (keys in order of first
    definition); ``defined`` gives each named object's key, place and whatever the caller reports it with."""
    seen: dict[Key, list[tuple[Location, T]]] = {}
    for key, where, item in defined:
        seen.setdefault(key, []).append((where, item))
    return [group for group in seen.values() if len(group) > 1]


def duplicate_message(kind: str, key: Key, where: Sequence[Location]) -> str:
    """What audit and validate say about one object defined ``len(where)`` times: every place, once, and what
    each verb does with it."""
    ns = f"{key[2]}/" if key[2] else ""
    places = ", ".join(str(w) for w in where)
    return (
        f"{kind} {ns}{key[3]} is defined {len(where)} times ({places}): kubectl apply of all of them keeps the "
        f"last ({where[-1]}); simulate simulates only that one and lists the others as replaced; migrate "
        "migrates each, warns at the earlier ones, and writes the same names for all of them, so the last "
        "one's output replaces the others' too"
    )


__all__ = [
    "CLUSTER_SCOPED",
    "Key",
    "duplicate_message",
    "duplicates",
    "effective_namespace",
    "key_of",
    "object_key",
]
