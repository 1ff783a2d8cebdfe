"""What the apiserver refuses in a container's hugepages requests and limits on create
(kubedra.k8s.podadmission.hugepage_issues: not overcommitable, so a request needs an equal limit; a whole multiple
of the page size; cpu or memory beside them): kubedra validate's verdict on one pod per case agrees with each
testbed release's apiserver (server-side dry-run)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubedra.sources.files import parse_text
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import create_ignore_exists
from kubedra.validate.dryrun import dry_run
from kubedra.validate.engine import validate_documents

pytestmark = pytest.mark.integration

NAMESPACE = "kubedra-hugepages"

# (limits, requests)
CASES: list[tuple[dict[str, str], dict[str, str]]] = [
    ({"hugepages-2Mi": "2Mi", "memory": "1Gi"}, {}),
    ({"hugepages-2Mi": "4Mi", "memory": "1Gi"}, {"hugepages-2Mi": "4Mi"}),
    ({"hugepages-2Mi": "3Mi", "memory": "1Gi"}, {}),  # not a multiple of 2Mi
    ({"hugepages-2Mi": "4Mi", "memory": "1Gi"}, {"hugepages-2Mi": "2Mi"}),  # request below the limit
    ({"memory": "1Gi"}, {"hugepages-2Mi": "2Mi"}),  # request without a limit
    ({"hugepages-2Mi": "2Mi"}, {}),  # neither cpu nor memory
    ({"hugepages-2Mi": "2Mi", "cpu": "1"}, {}),
    ({"hugepages-1Gi": "1Gi", "memory": "2Gi"}, {}),
    ({"hugepages-1Gi": "1.5Gi", "memory": "2Gi"}, {}),
    ({"hugepages-1Gi": "1073741824", "memory": "2Gi"}, {}),
    ({"hugepages-2Mi": "0", "memory": "1Gi"}, {}),
    ({"hugepages-2Mi": "2097152500m", "memory": "1Gi"}, {}),  # Value() rounds up: 2097153 bytes
    ({"hugepages-3Mi": "6Mi", "memory": "1Gi"}, {}),
    ({"hugepages-2Mi": "2Mi", "memory": "1Gi"}, {"hugepages-2Mi": "2048Ki"}),  # equal values
]


def _pod(i: int, limits: dict[str, str], requests: dict[str, str]) -> dict[str, Any]:
    resources: dict[str, Any] = {"limits": limits}
    if requests:
        resources["requests"] = requests
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"h{i}", "namespace": NAMESPACE},
        "spec": {"containers": [{"name": "c", "image": "x:1", "resources": resources}]},
    }


def _agree(cp: ControlPlane) -> None:
    text = "\n---\n".join(json.dumps(_pod(i, lim, req)) for i, (lim, req) in enumerate(CASES))
    docs = parse_text(text, "pods.yaml").documents
    create_ignore_exists(cp.api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    offline = {int(e.name[1:]) for e in validate_documents(docs, cp.version).errors}
    server = {int(e.name[1:]) for e in dry_run(docs, kubeconfig=str(cp.kubeconfig))}
    assert offline == server, {
        "only kubedra refuses": [CASES[i] for i in sorted(offline - server)],
        "only the apiserver": [CASES[i] for i in sorted(server - offline)],
    }
    assert len(server) >= 5  # the refusals are there to find


def test_hugepages_match_the_apiserver(controlplane: ControlPlane) -> None:
    _agree(controlplane)


def test_hugepages_match_each_release_apiserver(release_controlplane: ControlPlane) -> None:
    _agree(release_controlplane)
