"""``kubedra policy test`` agrees with a real 1.37 apiserver enforcing the same generated policies (Deny)."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest
import yaml

from kubedra.policy.evaluate import Evaluator
from kubedra.policy.generate import PolicyOptions, generate, render
from kubedra.sources.files import parse_text
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import create_ignore_exists
from kubedra.validate.dryrun import dry_run

pytestmark = pytest.mark.integration

NS = "kubedra-policy-test"
PARAMS_NS = "kubedra-policy-params"


def _pod(name: str, **container: Any) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": "c",
        "image": "repo/app:1.0",
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
    }
    c.update(container)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app.kubernetes.io/name": name}},
        "spec": {"containers": [c]},
    }


OBJECTS = [
    _pod("good"),
    _pod("latest", image="repo/app:latest"),
    _pod("untagged", image="registry:5000/app"),
    _pod("root", securityContext={"privileged": True}),
    _pod("noresources", resources={}),
    {**_pod("nolabel"), "metadata": {"name": "nolabel", "namespace": NS}},
    {
        **_pod("gpu-on-dra"),
        "spec": {
            "nodeSelector": {"kubedra.io/dra-pool": "true"},
            "containers": [
                {
                    "name": "c",
                    "image": "repo/app:1.0",
                    "resources": {
                        "requests": {"cpu": "1", "memory": "1Gi"},
                        "limits": {"memory": "1Gi", "nvidia.com/gpu": "1"},
                    },
                }
            ],
        },
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "rogue", "namespace": NS},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "rogue.example.com"}}]}
            }
        },
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "known", "namespace": NS},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
            }
        },
    },
]


def _policies() -> list[dict[str, Any]]:
    docs = yaml.safe_load_all(render(generate(PolicyOptions(actions=("Deny",), params_namespace=PARAMS_NS))))
    out = []
    for d in docs:
        if d["kind"] == "ValidatingAdmissionPolicyBinding":  # only this test's namespace
            d["spec"]["matchResources"] = {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}}
            }
        out.append(d)
    return out


def test_policy_test_matches_the_apiserver(controlplane: ControlPlane) -> None:
    api = controlplane.api
    for ns in (NS, PARAMS_NS):
        create_ignore_exists(api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    policies = _policies()
    for p in policies:
        create_ignore_exists(api, p)
    try:
        text = yaml.safe_dump_all(OBJECTS, sort_keys=False)
        docs = parse_text(text, "objects.yaml").documents
        evaluator = Evaluator(parse_text(yaml.safe_dump_all(policies), "policies.yaml").documents, "1.37")
        offline = {v.document.name: v.message for v in evaluator.evaluate(docs)}
        # policies take effect asynchronously: poll until the verdicts settle (or a minute passed)
        deadline = time.monotonic() + 60
        while True:
            server_errors = dry_run(docs, kubeconfig=str(controlplane.kubeconfig))
            server = {e.name for e in server_errors}
            if server == set(offline) or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert set(offline) == server, json.dumps({"offline": offline, "server": sorted(server)}, indent=1)
        for e in server_errors:  # the server quotes kubedra's message
            assert offline[e.name] in e.message, (offline[e.name], e.message)
        assert "good" not in offline
        assert "known" not in offline
    finally:
        for p in policies:
            if p["kind"] == "ValidatingAdmissionPolicyBinding":
                with contextlib.suppress(Exception):
                    api.delete(p)
