"""A small JSON REST client for the test control plane (client-certificate auth, stdlib only).

Tests talk to the apiserver with plain JSON so that what they send is exactly the manifest they wrote;
the ``kubernetes`` package can also be pointed at :attr:`ControlPlane.kubeconfig` when a test wants it.
"""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# Kinds tests commonly create, with their plural and whether they are namespaced.
_RESOURCES: dict[str, tuple[str, bool]] = {
    "Namespace": ("namespaces", False),
    "Node": ("nodes", False),
    "Pod": ("pods", True),
    "ServiceAccount": ("serviceaccounts", True),
    "Secret": ("secrets", True),
    "ConfigMap": ("configmaps", True),
    "Deployment": ("deployments", True),
    "ReplicaSet": ("replicasets", True),
    "ReplicationController": ("replicationcontrollers", True),
    "CronJob": ("cronjobs", True),
    "Service": ("services", True),
    "PersistentVolumeClaim": ("persistentvolumeclaims", True),
    "RuntimeClass": ("runtimeclasses", False),
    "StatefulSet": ("statefulsets", True),
    "DaemonSet": ("daemonsets", True),
    "Job": ("jobs", True),
    "Role": ("roles", True),
    "RoleBinding": ("rolebindings", True),
    "ClusterRole": ("clusterroles", False),
    "ClusterRoleBinding": ("clusterrolebindings", False),
    "PriorityClass": ("priorityclasses", False),
    "ValidatingAdmissionPolicy": ("validatingadmissionpolicies", False),
    "ValidatingAdmissionPolicyBinding": ("validatingadmissionpolicybindings", False),
    "ValidatingWebhookConfiguration": ("validatingwebhookconfigurations", False),
    "MutatingWebhookConfiguration": ("mutatingwebhookconfigurations", False),
    "ResourceSlice": ("resourceslices", False),
    "DeviceClass": ("deviceclasses", False),
    "DeviceTaintRule": ("devicetaintrules", False),
    "ResourceClaim": ("resourceclaims", True),
    "ResourceClaimTemplate": ("resourceclaimtemplates", True),
    "Workload": ("workloads", True),
    "PodGroup": ("podgroups", True),
}


class ApiError(RuntimeError):
    """The apiserver answered with an error status."""

    def __init__(self, status: int, method: str, path: str, body: str) -> None:
        self.status = status
        self.reason = ""
        message = body
        try:
            doc = json.loads(body)
            self.reason = str(doc.get("reason", ""))
            message = str(doc.get("message", body))
        except ValueError:
            pass
        super().__init__(f"{method} {path}: {status} {message}")


def resource_path(
    api_version: str,
    kind: str,
    name: str | None = None,
    namespace: str | None = None,
    subresource: str | None = None,
) -> str:
    """The REST path of ``kind`` at ``api_version`` (``v1``, ``resource.k8s.io/v1``, ...)."""
    try:
        plural, namespaced = _RESOURCES[kind]
    except KeyError:
        raise ValueError(f"kind {kind} is not known to kubedra.testing.kubeapi") from None
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    if namespaced:  # quoted: a name the apiserver refuses ("FILLED BY THE OPERATOR") still reaches it
        base += f"/namespaces/{urllib.parse.quote(namespace or 'default', safe='')}"
    path = f"{base}/{plural}"
    if name is not None:
        path += f"/{urllib.parse.quote(name, safe='')}"
    if subresource is not None:
        path += f"/{subresource}"
    return path


def object_path(obj: dict[str, Any], subresource: str | None = None, with_name: bool = True) -> str:
    meta = obj.get("metadata", {})
    return resource_path(
        obj["apiVersion"],
        obj["kind"],
        meta.get("name") if with_name else None,
        meta.get("namespace"),
        subresource,
    )


class KubeAPI:
    """JSON over HTTPS to one apiserver, authenticated with a client certificate."""

    def __init__(self, server: str, ca_file: Path, cert_file: Path, key_file: Path, timeout: float = 30.0):
        self.server = server.rstrip("/")
        self.timeout = timeout
        self._ssl = ssl.create_default_context(cafile=str(ca_file))
        self._ssl.load_cert_chain(str(cert_file), str(key_file))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> Any:
        # bytes go as they are (a manifest's text, for the apiserver's own YAML decoding); anything else as JSON
        data = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self._ssl, timeout=timeout or self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as err:
            raise ApiError(err.code, method, path, err.read().decode(errors="replace")) from None
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode(errors="replace")

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """POST ``obj`` to its collection; returns the stored object."""
        result: dict[str, Any] = self.request("POST", object_path(obj, with_name=False), obj)
        return result

    def apply_status(self, obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
        """Merge-patch the status subresource (how a kubelet or driver reports status)."""
        result: dict[str, Any] = self.request(
            "PATCH",
            object_path(obj, subresource="status"),
            {"status": status},
            content_type="application/merge-patch+json",
        )
        return result

    def merge_patch(self, obj: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self.request(
            "PATCH", object_path(obj), patch, content_type="application/merge-patch+json"
        )
        return result

    def delete(self, obj: dict[str, Any]) -> None:
        self.request("DELETE", object_path(obj))

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.get(resource_path(api_version, kind, namespace=namespace))["items"]
        return items

    def wait_for(
        self,
        what: str,
        check: Callable[[], T | None],
        timeout: float = 60.0,
        interval: float = 0.2,
    ) -> T:
        """Call ``check`` until it returns something other than None/False; raise TimeoutError naming ``what``."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while True:
            try:
                value = check()
                if value is not None and value is not False:
                    return value
            except ApiError as err:
                last_error = err
            if time.monotonic() > deadline:
                suffix = f" (last error: {last_error})" if last_error else ""
                raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}{suffix}")
            time.sleep(interval)
