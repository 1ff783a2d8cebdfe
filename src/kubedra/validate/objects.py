"""What the apiserver refuses for any object that its OpenAPI schema cannot say.

- ``metadata.name``: required (unless ``generateName``), and of the format the kind's validation asks
  (``ValidateObjectMeta`` with ``NameIsDNSSubdomain`` for most kinds, a DNS label for Namespace, a DNS-1035
  label for Service, a path segment for RBAC kinds and CertificateSigningRequest).
- ``spec.replicas``: an int32 (the JSON decoder refuses a larger number), and not negative.
- ConfigMap and Secret payloads: at most 1 MiB (``MaxSecretSize``) in total, keys included.
- Duplicate mapping keys: kubectl's strict decoding refuses them (``mapping key "x" already defined at
  line N``), where PyYAML silently keeps the last value. Checked on the document's node tree, here only:
  the bulk reader does not pay for it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from kubedra.k8s.dnsnames import dns_label, dns_subdomain
from kubedra.k8s.workloads import api_group
from kubedra.sources import yamlscalars
from kubedra.validate.rules import Issue

MAX_PAYLOAD_BYTES = 1024 * 1024  # k8s.io/kubernetes pkg/apis/core.MaxSecretSize, also used for ConfigMaps
INT32_MAX = (1 << 31) - 1

# kind (group, kind) -> name format; anything else is a DNS subdomain (custom resources too)
_DNS_LABEL_KINDS = frozenset({("", "Namespace")})
_DNS1035_KINDS = frozenset({("", "Service")})
_PATH_SEGMENT_KINDS = frozenset(
    {
        ("rbac.authorization.k8s.io", "Role"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "RoleBinding"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    }
)
_REPLICA_KINDS = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "ReplicaSet"),
        ("", "ReplicationController"),
    }
)


_NAME_REQUIRED = "metadata.name is required (the apiserver refuses an object without one)"


def object_issues(obj: Mapping[str, Any]) -> list[Issue]:
    group = api_group(str(obj.get("apiVersion", "")))
    kind = str(obj.get("kind", ""))
    out = _name_issues(group, kind, obj.get("metadata"))
    if (group, kind) in _REPLICA_KINDS:
        spec = obj.get("spec")
        if isinstance(spec, Mapping) and "replicas" in spec:
            err = _replicas(spec["replicas"])
            if err:
                out.append(Issue(("spec", "replicas"), err))
    if group == "" and kind in ("ConfigMap", "Secret"):
        out.extend(_payload_issues(kind, obj))
    return out


def _name_issues(group: str, kind: str, meta: Any) -> list[Issue]:
    if not isinstance(meta, Mapping):
        return [Issue(("metadata",), _NAME_REQUIRED)]
    name = meta.get("name")
    if name is None or name == "":
        if meta.get("generateName"):
            return []
        return [Issue(("metadata",), _NAME_REQUIRED)]
    if not isinstance(name, str):
        return []  # the schema says it must be a string
    key = (group, kind)
    if key in _PATH_SEGMENT_KINDS:
        err = _path_segment(name)
    elif key in _DNS_LABEL_KINDS:
        err = dns_label(name)
    elif key in _DNS1035_KINDS:
        err = dns_label(name) or (
            None if name[0].isalpha() else f"{name!r} must start with a letter (DNS-1035)"
        )
    else:
        err = dns_subdomain(name)
    return [Issue(("metadata", "name"), f"metadata.name {err}")] if err else []


def _path_segment(name: str) -> str | None:
    if name in (".", ".."):
        return f"may not be {name!r}"
    bad = [c for c in ("/", "%") if c in name]
    return f"may not contain {bad[0]!r}" if bad else None


def _replicas(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None  # the schema says what type it must be
    if isinstance(value, float) and not value.is_integer():
        return f"{value!r} is not a whole number"
    if value > INT32_MAX:
        return f"{value!r} is out of range for an int32 (at most {INT32_MAX})"
    if value < 0:
        return f"{value!r}: must be greater than or equal to 0"
    return None


def _payload_issues(kind: str, obj: Mapping[str, Any]) -> list[Issue]:
    total = 0
    sections = ("data", "binaryData") if kind == "ConfigMap" else ("data",)
    for section in sections:
        values = obj.get(section)
        for k, v in values.items() if isinstance(values, Mapping) else []:
            total += len(str(k).encode())
            if not isinstance(v, str):
                continue
            if section == "binaryData" or kind == "Secret":
                try:
                    total += len(base64.b64decode(v, validate=False))
                except (binascii.Error, ValueError):
                    total += len(v.encode())
            else:
                total += len(v.encode())
    if kind == "Secret":
        extra = obj.get("stringData")
        for k, v in extra.items() if isinstance(extra, Mapping) else []:
            total += len(str(k).encode()) + len(str(v).encode())
    if total > MAX_PAYLOAD_BYTES:
        where = "data and binaryData" if kind == "ConfigMap" else "data and stringData"
        return [
            Issue(
                (sections[0],) if sections[0] in obj else (),
                f"{kind} {where} hold {total:,} bytes: too long, must have at most {MAX_PAYLOAD_BYTES:,} bytes",
            )
        ]
    return []


def duplicate_keys(node: yaml.Node | None) -> Iterator[tuple[int, str]]:
    """(1-based line, message) for every mapping key defined twice in the same mapping under ``node``."""
    if node is None:
        return
    seen_nodes: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen_nodes:
            continue  # an alias: its node was (or will be) checked once
        seen_nodes.add(id(n))
        if isinstance(n, yaml.MappingNode):
            first: dict[str, int] = {}
            for k, v in n.value:
                stack.append(v)
                if not isinstance(k, yaml.ScalarNode) or k.tag == yamlscalars.MERGE:
                    continue
                line = k.start_mark.line + 1
                if k.value in first:
                    yield line, f'mapping key "{k.value}" already defined at line {first[k.value]}'
                else:
                    first[k.value] = line
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
