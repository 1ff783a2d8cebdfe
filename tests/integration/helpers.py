"""Helpers for the integration tests that run kubedra against the session's real control plane
(tests/integration/audit and tests/integration/snapshot): objects created and removed through the apiserver,
kubeconfigs with ServiceAccount (or wrong) tokens, the CLI as a subprocess or in-process, and a record of
the HTTP requests kubedra's own client sent to the apiserver.

Imported as ``helpers``: tests/integration is on ``sys.path`` because its conftest.py is not in a package.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from kubedra import cli
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.kubeapi import ApiError, KubeAPI

# kind -> (plural, namespaced) for what these tests create; the group/version comes from the object itself
PLURALS: dict[str, tuple[str, bool]] = {
    "Namespace": ("namespaces", False),
    "ServiceAccount": ("serviceaccounts", True),
    "Secret": ("secrets", True),
    "ConfigMap": ("configmaps", True),
    "Node": ("nodes", False),
    "Deployment": ("deployments", True),
    "DaemonSet": ("daemonsets", True),
    "ClusterRole": ("clusterroles", False),
    "ClusterRoleBinding": ("clusterrolebindings", False),
    "Role": ("roles", True),
    "RoleBinding": ("rolebindings", True),
    "ValidatingWebhookConfiguration": ("validatingwebhookconfigurations", False),
    "CustomResourceDefinition": ("customresourcedefinitions", False),
    "ResourceSlice": ("resourceslices", False),
    "DeviceClass": ("deviceclasses", False),
    "PyTorchJob": ("pytorchjobs", True),
}


def collection(obj: dict[str, Any], plural: str | None = None) -> str:
    """The REST collection of ``obj`` (its kind must be in PLURALS unless ``plural`` is given)."""
    name, namespaced = (plural, True) if plural else PLURALS[obj["kind"]]
    api_version = obj["apiVersion"]
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    if namespaced:
        base += f"/namespaces/{obj['metadata']['namespace']}"
    return f"{base}/{name}"


def create(api: KubeAPI, obj: dict[str, Any]) -> dict[str, Any]:
    """POST ``obj``; an object that already exists is left as it is."""
    try:
        result: dict[str, Any] = api.request("POST", collection(obj), obj)
        return result
    except ApiError as e:
        if e.status == 409:
            return obj
        raise


def delete(api: KubeAPI, obj: dict[str, Any]) -> None:
    """DELETE ``obj``; one that is gone already is fine."""
    try:
        api.request("DELETE", f"{collection(obj)}/{obj['metadata']['name']}")
    except ApiError as e:
        if e.status != 404:
            raise


@dataclass
class Objects:
    """What a fixture created, removed again in reverse order. Namespaced objects go with their namespace
    (when the namespace is tracked too)."""

    api: KubeAPI
    created: list[dict[str, Any]] = field(default_factory=list)

    def add(self, obj: dict[str, Any]) -> dict[str, Any]:
        stored = create(self.api, obj)
        self.created.append(obj)
        return stored

    def cleanup(self) -> None:
        namespaces = {o["metadata"]["name"] for o in self.created if o["kind"] == "Namespace"}
        for obj in reversed(self.created):
            if obj["metadata"].get("namespace") in namespaces:
                continue
            delete(self.api, obj)


def establish_crd(objects: Objects, crd: dict[str, Any]) -> None:
    """Create a CRD and wait until discovery serves its resource (what kubedra's discovery will see)."""
    objects.add(crd)
    spec = crd["spec"]
    version = spec["versions"][0]["name"]
    path = f"/apis/{spec['group']}/{version}"

    def served() -> bool:
        try:
            resources = objects.api.get(path).get("resources") or []
        except ApiError as e:
            if e.status == 404:
                return False
            raise
        return any(r.get("name") == spec["names"]["plural"] for r in resources)

    objects.api.wait_for(f"discovery of {path}", served)


def crd(group: str, kind: str, plural: str, scope: str = "Namespaced") -> dict[str, Any]:
    """A CustomResourceDefinition that accepts anything (one served, stored version v1)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


def user_kubeconfig(cp: ControlPlane, path: Path, user: dict[str, Any], name: str = "tb") -> Path:
    """A kubeconfig for the control plane whose one user authenticates with ``user`` (a token, an exec plugin)."""
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "tb",
                        "cluster": {"server": cp.url, "certificate-authority": str(cp.certs / "ca.crt")},
                    }
                ],
                "users": [{"name": name, "user": user}],
                "contexts": [{"name": name, "context": {"cluster": "tb", "user": name}}],
                "current-context": name,
            }
        )
    )
    return path


def token_kubeconfig(cp: ControlPlane, path: Path, token: str, name: str = "tb") -> Path:
    """A kubeconfig for the control plane that authenticates with a bearer token (right or wrong)."""
    return user_kubeconfig(cp, path, {"token": token}, name)


def fresh_namespace(cp: ControlPlane, prefix: str = "t") -> str:
    """A fresh namespace whose "default" ServiceAccount exists (pod admission needs it; the
    serviceaccount-controller creates it)."""
    import uuid

    from kubedra.testing.fakecluster import wait_for_service_account

    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    cp.api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    wait_for_service_account(cp.api, name)
    return name


def sa_kubeconfig(cp: ControlPlane, tmp: Path, namespace: str, sa: str) -> Path:
    """A kubeconfig (context named after the ServiceAccount) with a fresh token of ``namespace/sa``."""
    req = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    tok = cp.api.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{sa}/token", req)["status"][
        "token"
    ]
    return token_kubeconfig(cp, tmp / f"{sa}.kubeconfig", tok, sa)


def with_contexts(cp: ControlPlane, path: Path, names: Iterable[str], down: Iterable[str] = ()) -> Path:
    """The control plane's admin kubeconfig with one context per name (all the same real cluster), plus
    contexts pointing at a closed loopback port for each name in ``down``."""
    kc = yaml.safe_load(cp.kubeconfig.read_text())
    cluster = kc["clusters"][0]["name"]
    user = kc["users"][0]["name"]
    kc["contexts"] = [{"name": n, "context": {"cluster": cluster, "user": user}} for n in names]
    for n in down:
        kc["clusters"].append(
            {
                "name": n,
                "cluster": {"server": f"https://127.0.0.1:{closed_port()}", "insecure-skip-tls-verify": True},
            }
        )
        kc["contexts"].append({"name": n, "context": {"cluster": n, "user": user}})
    kc["current-context"] = kc["contexts"][0]["name"]
    path.write_text(yaml.safe_dump(kc))
    return path


def closed_port() -> int:
    """A loopback port nothing listens on (bound once, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


def kubedra_json(*args: str) -> tuple[int, dict[str, Any], str]:
    """``kubedra ARGS -o json`` in a subprocess, as a user runs it: (exit code, parsed stdout, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-m", "kubedra", *args, "-o", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, out, proc.stderr


@click.command(
    add_help_option=False, context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
@click.pass_context
def _entry(ctx: click.Context) -> None:
    cli.main(list(ctx.args))


def kubedra_inprocess(*args: str) -> Result:
    """``kubedra ARGS`` through cli.main in this process (real exit codes), so :func:`record_requests` sees
    what it sends."""
    return CliRunner().invoke(_entry, list(args), catch_exceptions=False)


def mine(report: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Findings about objects whose namespace or name starts with ``prefix``."""
    return [
        f
        for f in report["findings"]
        if (f["object"]["namespace"] or "").startswith(prefix) or f["object"]["name"].startswith(prefix)
    ]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, list[str]]


def record_requests(monkeypatch: pytest.MonkeyPatch) -> list[Request]:
    """Every HTTP request kubedra's Kubernetes client sends from now on (method, path, query), in order.
    Nothing is changed: each call goes on to the real apiserver."""
    from kubernetes.client import ApiClient

    seen: list[Request] = []
    original = ApiClient.call_api

    def spy(self: ApiClient, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        parts = urlsplit(url)
        seen.append(Request(method, parts.path, parse_qs(parts.query)))
        return original(self, method, url, *args, **kwargs)

    monkeypatch.setattr(ApiClient, "call_api", spy)
    return seen


def bind_core_role(objects: Objects, prefix: str, namespace: str, service_account: str) -> None:
    """The shipped core ClusterRole (deploy/kubedra-clusterrole.yaml, renamed ``PREFIX-core`` so tests do not
    collide) bound to ``namespace/service_account``; removed with ``objects``."""
    repo = Path(__file__).resolve().parents[2]
    role = next(
        d
        for d in yaml.safe_load_all((repo / "deploy" / "kubedra-clusterrole.yaml").read_text())
        if d and d["kind"] == "ClusterRole"
    )
    name = f"{prefix}-core"
    objects.add({**role, "metadata": {**role["metadata"], "name": name}})
    objects.add(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
        }
    )
