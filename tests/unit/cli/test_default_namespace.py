"""``namespace: default`` and an omitted namespace are one namespace (kubectl sends an object without one to its
namespace, ``default`` without a context namespace) in every reference check of every verb
(kubedra.k8s.namespaces.effective). Each test joins a real file that omits the namespace with one that says it."""

from __future__ import annotations

import json
from pathlib import Path

from kubedra.testing.cli import run

REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "inputs"
SHARED_CLAIM = REALWORLD / "dra-driver--bats-rc-shared-gpu.yaml"  # ResourceClaim rc-shared-gpu, no namespace
TGI = (
    REALWORLD / "gke--tgi-gemma-2b-it.yaml"
)  # Deployment tgi-gemma-deployment, one nvidia.com/gpu, no namespace

POD_IN_DEFAULT = """\
apiVersion: v1
kind: Pod
metadata:
  name: uses-shared
  namespace: default
spec:
  containers:
  - name: c
    image: cuda
    resources:
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimName: rc-shared-gpu
"""

TEMPLATE_IN_DEFAULT = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {name}
  namespace: default
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
"""

POD_WITHOUT_NAMESPACE = """\
apiVersion: v1
kind: Pod
metadata:
  name: uses-template
spec:
  containers:
  - name: c
    image: cuda
    resources:
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpu-template
"""


def test_validate_finds_a_claim_in_default_for_a_pod_that_names_default(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD_IN_DEFAULT)
    # was: "ResourceClaim 'rc-shared-gpu' is not among the inputs (namespace default)", an error with --strict-refs
    result = run("validate", "--strict-refs", "-o", "json", str(SHARED_CLAIM), str(pod), code=0)
    data = json.loads(result.stdout)
    assert data["valid"] is True, data
    assert not data["warnings"], data


def test_validate_finds_a_template_that_names_default_for_a_pod_that_omits_it(tmp_path: Path) -> None:
    (tmp_path / "template.yaml").write_text(TEMPLATE_IN_DEFAULT.format(name="gpu-template"))
    (tmp_path / "pod.yaml").write_text(POD_WITHOUT_NAMESPACE)
    result = run(
        "validate", "--strict-refs", "-o", "json", str(tmp_path / "template.yaml"), str(tmp_path / "pod.yaml")
    )
    assert result.exit_code == 0, result.output
    assert not json.loads(result.stdout)["warnings"]


def test_migrate_does_not_take_the_name_of_a_template_in_default(tmp_path: Path) -> None:
    """The Deployment omits its namespace; a ResourceClaimTemplate of the name migrate would write is in
    ``default``, the same namespace: migrate must pick another name, or applying its output replaces that
    template (it wrote tgi-gemma-deployment-gpu over it)."""
    taken = tmp_path / "taken.yaml"
    taken.write_text(TEMPLATE_IN_DEFAULT.format(name="tgi-gemma-deployment-gpu"))
    result = run("migrate", str(TGI), str(taken), code=0)
    assert "resourceClaimTemplateName: tgi-gemma-deployment-gpu-2" in result.stdout
    assert "name: tgi-gemma-deployment-gpu\n" not in result.stdout


def test_audit_links_a_pending_pod_without_namespace_to_its_claim_in_default(tmp_path: Path) -> None:
    """A captured (uid) unallocated claim in ``default`` and the Pending pod waiting for it, which omits its
    namespace: the claim is reported with the pod waiting for it (a warning), not as an idle claim (info)."""
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "rc-shared-gpu", "namespace": "default", "uid": "u1"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
        },
        "status": {},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "waiting", "uid": "u2"},
        "spec": {
            "containers": [{"name": "c", "image": "cuda", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "rc-shared-gpu"}],
        },
        "status": {"phase": "Pending"},
    }
    (tmp_path / "claim.yaml").write_text(json.dumps(claim))
    (tmp_path / "pod.yaml").write_text(json.dumps(pod))
    result = run("audit", "-o", "json", str(tmp_path / "claim.yaml"), str(tmp_path / "pod.yaml"))
    (finding,) = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "dra.claim-unallocated"]
    assert finding["severity"] == "warning", finding
    assert "pending pod: waiting" in finding["message"], finding
