"""``kubedra allocate`` and ``kubedra explain`` as a user runs them."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from click.testing import CliRunner

from kubedra.cli import cli

DATA = Path(__file__).parents[2] / "data" / "allocate"


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_allocate_json_shape_and_exit_code():
    r = run("allocate", "-f", str(DATA / "two-nodes.yaml"), "-o", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    by_node = {e["node"]: e for e in out}
    assert by_node["node-a"]["allocated"] is False
    assert by_node["node-a"]["explanation"][1]["available"] == 1  # gpu-0 is in use by team-a/running
    b = by_node["node-b"]
    assert b["allocated"] is True
    assert b["error"] is None
    (c,) = b["claims"]
    assert (c["namespace"], c["name"]) == ("team-b", "two-gpus")
    assert [(x["request"], x["pool"], x["device"]) for x in c["results"]] == [
        ("gpus", "node-b", "gpu-0"),
        ("gpus", "node-b", "gpu-1"),
    ]
    assert set(c["results"][0]) == {
        "request",
        "driver",
        "pool",
        "device",
        "adminAccess",
        "shareID",
        "consumedCapacity",
    }


def test_allocate_exit_1_when_no_node_fits():
    r = run("allocate", "-f", str(DATA / "two-nodes.yaml"), "--node", "node-a")
    assert r.exit_code == 1
    assert "in use by other claims: gpu-0" in r.output


def test_allocate_reads_stdin():
    text = (DATA / "two-nodes.yaml").read_text()
    r = run("allocate", "-f", "-", "-o", "yaml", input=text)
    assert r.exit_code == 0
    assert "node: node-b" in r.output


def test_explain_names_the_step_that_removes_devices():
    r = run("explain", "-f", str(DATA / "two-nodes.yaml"), "--claim", "team-b/two-gpus")
    assert r.exit_code == 0
    assert "node node-a: cannot allocate team-b/two-gpus request gpus" in r.output
    assert "needs 2, 1 available" in r.output
    assert "node node-b: can allocate" in r.output


def main_exit(*args: str) -> int:
    """``kubedra ARGS`` through cli.main, as the exit code a shell sees."""
    from kubedra.cli import main

    try:
        main(list(args))
    except SystemExit as e:
        return int(e.code or 0)
    return 0


def test_bad_inputs_give_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: [\n")
    assert main_exit("allocate", "-f", str(bad)) == 2
    qty = tmp_path / "qty.yaml"
    qty.write_text((DATA / "two-nodes.yaml").read_text().replace("80Gi}", "lots}", 1))
    assert main_exit("allocate", "-f", str(qty)) == 2
    assert main_exit("allocate", "-f", str(tmp_path / "missing.yaml")) == 2
    assert main_exit("allocate", "-f", str(DATA / "two-nodes.yaml"), "--target-version", "1.12") == 2
    assert main_exit("allocate", "-f", str(DATA / "two-nodes.yaml"), "--feature-gates", "Nope=true") == 2
    assert main_exit("explain", "-f", str(DATA / "two-nodes.yaml"), "--claim", "x/none") == 2


def test_bad_input_message_names_file_and_line(tmp_path, capsys):
    from kubedra.cli import main

    qty = tmp_path / "qty.yaml"
    qty.write_text((DATA / "two-nodes.yaml").read_text().replace("80Gi}", "lots}", 1))
    with contextlib.suppress(SystemExit):
        main(["allocate", "-f", str(qty)])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert f"{qty}:20: spec.devices[0].capacity.memory.value: invalid quantity 'lots'" in err[0]


def test_explain_live_target_needs_a_reachable_cluster(tmp_path) -> None:
    kc = tmp_path / "kubeconfig"
    kc.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: x, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: x, user: x}}]\n"
    )
    assert main_exit("explain", "pod/p", "-n", "ns", "--kubeconfig", str(kc), "--timeout", "2") == 2
    # files need --claim, or pod/NAME, claim/NAME (then the files are the cluster: see below)
    assert main_exit("explain", str(DATA / "two-nodes.yaml")) == 2


def test_explain_pod_name_with_files_explains_the_pods_claims_from_the_files(tmp_path) -> None:
    """``explain pod/NAME -n NS FILES`` was refused ('--claim NAMESPACE/NAME is required with files', or
    'reads the cluster: give no files with it'); now the pod's claims are resolved from the files like from a
    cluster, and ``claim/NAME -n NS`` is ``--claim NS/NAME``."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: trainer, namespace: team-b}\n"
        "spec:\n  containers: [{name: c, image: x}]\n"
        "  resourceClaims: [{name: gpus, resourceClaimName: two-gpus}]\n"
    )
    files = (str(DATA / "two-nodes.yaml"), str(pod))
    r = run("explain", "pod/trainer", "-n", "team-b", *files)
    assert r.exit_code == 0, r.output
    assert "node node-b: can allocate: gpus → " in r.output
    assert "node node-a: cannot allocate team-b/two-gpus" in r.output
    r = run("explain", *files, "claim/two-gpus", "-n", "team-b", "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["claim"] == "claim/two-gpus -n team-b"
    assert main_exit("explain", "pod/trainer", "-n", "team-a", *files) == 2  # not in that namespace
    assert main_exit("explain", "pod/trainer", "--claim", "team-b/two-gpus", *files) == 2  # two subjects


def test_explain_any_pod_name_is_an_object_not_a_file(capsys) -> None:
    """The docs' own placeholder ``pod/NAME`` was taken for a file path (only lower-case names matched) and
    answered '--claim NAMESPACE/NAME is required with files'; now it is an object whose name breaks the
    apiserver's rule: one line naming the rule, exit 2."""
    assert main_exit("explain", "pod/NAME", "-n", "NAMESPACE") == 2
    (err,) = capsys.readouterr().err.strip().splitlines()
    assert "DNS subdomain" in err
    assert "required with files" not in err
    assert main_exit("explain", "claim/a b", str(DATA / "two-nodes.yaml")) == 2
    assert "DNS subdomain" in capsys.readouterr().err


def test_explain_hints_a_class_whose_driver_publishes_nothing(tmp_path) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(
        """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fpga}
spec:
  selectors: [{cel: {expression: 'device.driver == "fpga.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests: [{name: r, exactly: {deviceClassName: fpga}}]
---
apiVersion: v1
kind: Node
metadata: {name: n1}
"""
    )
    r = run("explain", "-f", str(f), "--claim", "ns/c")
    assert r.exit_code == 1
    assert (
        "hint: DeviceClass fpga selects driver fpga.example.com, but no ResourceSlice publishes it"
        in r.output
    )


def test_explain_finds_a_claim_without_namespace_in_default(tmp_path) -> None:
    """A claim written without a namespace is in "default", as kubectl apply would put it."""
    f = tmp_path / "in.yaml"
    f.write_text(
        """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fpga}
spec:
  selectors: [{cel: {expression: 'device.driver == "fpga.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: [{name: r, exactly: {deviceClassName: fpga}}]
---
apiVersion: v1
kind: Node
metadata: {name: n1}
"""
    )
    for ref in ("c", "default/c"):
        r = run("explain", "-f", str(f), "--claim", ref)
        assert r.exit_code == 1, (ref, r.output)
        assert "not found" not in r.output
    assert main_exit("explain", "-f", str(f), "--claim", "other/c") == 2


def test_explain_says_a_device_has_no_such_capacity_not_that_it_ran_out(tmp_path) -> None:
    """The reason "not enough consumable capacity" only for a device that has the capacity."""
    f = tmp_path / "in.yaml"
    f.write_text(
        """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: d0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests:
    - name: r
      exactly:
        deviceClassName: gpu
        capacity: {requests: {memory: 10Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
"""
    )
    r = run("explain", "-f", str(f), "--claim", "ns/c")
    assert r.exit_code == 1
    assert "no consumable capacity memory at all: d0" in r.output
    assert "not enough consumable capacity" not in r.output


def test_a_device_class_not_given_is_an_input_error_not_no_node_can(tmp_path) -> None:
    """The claims' DeviceClass left out of the files: allocate and explain answered 'no node can' (exit 1)
    from 'could not retrieve device class', a class kubedra never read; now one line naming it, exit 2."""
    from kubedra.testing.cli import run as cli_run

    text = (DATA / "two-nodes.yaml").read_text()
    docs = text.split("\n---\n")
    assert "kind: DeviceClass" in docs[0]
    f = tmp_path / "in.yaml"
    f.write_text("\n---\n".join(docs[1:]))
    want = (
        "kubedra: error: DeviceClass gpu.example.com (claim team-b/two-gpus, request gpus) is not among the "
        "inputs: add it (kubectl get deviceclass gpu.example.com -o yaml)\n"
    )
    for args in (("allocate", str(f)), ("explain", str(f), "--claim", "team-b/two-gpus")):
        r = cli_run(*args)
        assert r.exit_code == 2, r.output
        assert r.stdout == "", r.output
        assert r.stderr == want, r.output
    assert cli_run("allocate", str(DATA / "two-nodes.yaml")).exit_code == 0  # with the class: decided


def test_compatibility_groups_gate_allocates_only_a_compatible_partition() -> None:
    """With DRADeviceCompatibilityGroups on, the slices that declare counter compatibility groups are used and
    a device goes only with devices of a group it shares on the same counter set (upstream's experimental
    allocator): vgpu-0 comes first but cannot join the allocated mig-0, so mig-1 is the answer. The gate used
    to be dropped, leaving the pool incomplete (exit 1), which is still the answer with the gate off."""
    path = str(DATA / "compatibility-groups.yaml")
    on = run(
        "allocate",
        "-f",
        path,
        "--target-version",
        "1.37",
        "--feature-gates",
        "DRADeviceCompatibilityGroups=true",
        "-o",
        "json",
    )
    assert on.exit_code == 0, on.output
    (node,) = json.loads(on.output)
    assert [r["device"] for c in node["claims"] for r in c["results"]] == ["mig-1"]
    off = run("allocate", "-f", path, "--target-version", "1.37", "-o", "json")
    assert off.exit_code == 1, off.output
    assert "incomplete" in off.output


def test_optional_node_operations_need_the_gate_and_a_node_that_declares_the_feature() -> None:
    """A slice with skipNodeOperations (1.37 alpha DRAOptionalNodeOperations): with the gate on upstream's
    experimental allocator gives its device only to a node whose status.declaredFeatures lists
    DRAOptionalNodeOperations, and the result carries skipNodeOperations. The gate used to be dropped, so
    both nodes took the device and the result lacked the field."""
    path = str(DATA / "optional-node-operations.yaml")
    r = run(
        "allocate",
        "-f",
        path,
        "--target-version",
        "1.37",
        "--feature-gates",
        "DRAOptionalNodeOperations=true",
        "-o",
        "json",
    )
    assert r.exit_code == 0, r.output
    by_node = {e["node"]: e for e in json.loads(r.output)}
    assert by_node["node-b"]["allocated"] is False
    (claim,) = by_node["node-a"]["claims"]
    assert [(x["device"], x["skipNodeOperations"]) for x in claim["results"]] == [("nic-0", ["*"])]


POOL_ORDER_PANIC = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: pick}
spec:
  selectors:
  - cel: {expression: "device.attributes['example.com'].pick == true"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: sa}
spec:
  driver: example.com
  nodeName: node-1
  pool: {name: pool-a, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: a0, attributes: {pick: {bool: true}}}
  - {name: a1, attributes: {pick: {bool: false}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: sb}
spec:
  driver: example.com
  nodeName: node-1
  pool: {name: pool-b, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: b0, attributes: {pick: {bool: true}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: two, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: pick, count: 2}
"""


def test_allocate_at_134_refuses_what_panics_in_some_pool_orders_only(tmp_path: Path) -> None:
    """v0.34's capacity recheck (DRAConsumableCapacity) panics when a0 comes first (b0 is then the request's
    device 1, past the end of its one-device slice) and not when b0 does: kubedra names the panic and says it
    depends on upstream's pool order, and no node is allocated (exit 1), as for any upstream panic."""
    f = tmp_path / "in.yaml"
    f.write_text(POOL_ORDER_PANIC)
    args = ["allocate", "-f", str(f), "--target-version", "1.34", "-o", "json"]
    r = run(*args, "--feature-gates", "DRAConsumableCapacity=true")
    assert r.exit_code == 1, r.output
    (node,) = json.loads(r.stdout)
    assert node["allocated"] is False
    assert "may panic here" in node["error"]
    assert "index out of range [1] with length 1" in node["error"]
    assert "depending on the order it walks the node's resource pools" in node["error"]
    off = run(*args)  # no capacity recheck: allocated in kubedra's order, as in every other
    assert off.exit_code == 0, off.output
