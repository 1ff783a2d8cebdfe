"""``kubedra simulate`` and ``kubedra demo`` as a user runs them: formats, exit codes, files written."""

from __future__ import annotations

import json
import struct
import sys
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli import cli, main

from .helpers import deployment

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def run(*args: str, input: str | None = None, code: int | None = None):
    """``kubedra ARGS`` through click (errors raise); with ``code``, the exit code must be that one."""
    r = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert code is None or r.exit_code == code, (r.exit_code, r.output)
    return r


def fail(argv: list[str], capsys) -> str:
    """Run through cli.main like the console script; return stderr, asserting exit 2 and one line."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    return err


def test_demo_shows_the_seed_result():
    r = run("demo")
    assert r.exit_code == 0, r.output
    assert "pods placed                 8               18" in r.output
    assert "density (pods placed, DRA / device plugin): 18 / 8 = 2.25x" in r.output
    assert "Insufficient nvidia.com/gpu" in r.output
    assert "DynamicMIG" in r.output
    assert "MIG mode enabled" in r.output


def test_demo_json_uses_the_simulate_shape():
    r = run("demo", "-o", "json")
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    dp, dra = out["modes"]["device-plugin"], out["modes"]["dra"]
    assert (dp["placed"], dp["pending"], dra["placed"], dra["pending"]) == (8, 10, 18, 0)
    assert dp["gpus"] == {"physical": 8, "used": 8}
    assert dra["memory"]["allocatedBytes"] < dp["memory"]["allocatedBytes"]
    assert all(p["reason"] for p in dp["pods"] if p["node"] is None)


def test_demo_cluster_example_has_a_gang_and_doubles_density():
    r = run("demo", "--example", "cluster", "-o", "json", code=0)
    out = json.loads(r.stdout)
    dp, dra = out["modes"]["device-plugin"], out["modes"]["dra"]
    assert dra["placed"] >= 2 * dp["placed"]
    placed = {p["name"] for p in dra["pods"] if p["node"]}
    assert {"finetune-llama-master-0", "finetune-llama-worker-2"} <= placed


def test_demo_unknown_example_is_exit_2(capsys):
    assert "unknown example 'nope'" in fail(["demo", "--example", "nope"], capsys)


def test_simulate_corpus_reports_what_it_cannot_expand():
    r = run("simulate", "-f", str(CORPUS / "legacy-gpu"), "--nodes", "2x8xH100-80GB")
    assert r.exit_code == 2, r.output  # the Helm template was not read: the simulation is incomplete
    assert "1 input not read (Helm templates or charts" in r.output
    assert "Not simulated (5)" in r.output
    assert "triton-gcp-helm-deployment-template.yaml.tpl" in r.output
    assert "deploymentConfig.resources.gpu" in r.output


def test_simulate_stdin_markdown_and_yaml(tmp_path):
    text = deployment("a", 3)
    r = run("simulate", "-f", "-", "--nodes", "1x2xL40S-48GB", "-o", "markdown", input=text)
    assert r.exit_code == 0, r.output
    assert "| pods placed | 2 | 2 |" in r.output
    assert "### Pending pods, device plugin (1)" in r.output
    y = run(
        "simulate", "-f", "-", "--nodes", "1x2xL40S-48GB", "-o", "yaml", "--mode", "dra", input=text, code=0
    )
    assert y.output.startswith("modes:\n  dra:\n")


def test_fail_on_pending_gives_exit_1(tmp_path):
    f = tmp_path / "w.yaml"
    f.write_text(deployment("a", 3))
    assert run("simulate", "-f", str(f), "--nodes", "1x2xL40S-48GB").exit_code == 0
    assert run("simulate", "-f", str(f), "--nodes", "1x2xL40S-48GB", "--fail-on-pending").exit_code == 1
    assert run("simulate", "-f", str(f), "--nodes", "1x4xL40S-48GB", "--fail-on-pending").exit_code == 0


def test_save_cluster_reads_back_as_both_views(tmp_path):
    w = tmp_path / "w.yaml"
    w.write_text(deployment("a", 9, memory="9Gi"))
    saved = tmp_path / "cluster.yaml"
    args = ["--dra-sizing", "mig", "-o", "json"]
    first = run(
        "simulate",
        "-f",
        str(w),
        "--nodes",
        "1x2xH100-80GB",
        "--gpu-mode",
        "mig-dynamic",
        "--save-cluster",
        str(saved),
        *args,
    )
    assert first.exit_code == 0, first.output
    again = run("simulate", "-f", str(w), "-f", str(saved), *args)
    assert again.exit_code == 0, again.output
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert a == b
    assert a["modes"]["dra"]["placed"] == 9
    assert a["modes"]["device-plugin"]["placed"] == 2


def test_chart_svg(tmp_path):
    w = tmp_path / "w.yaml"
    w.write_text(deployment("a", 3))
    chart = tmp_path / "use.svg"
    r = run("simulate", "-f", str(w), "--nodes", "2x2xA100-80GB", "--chart", str(chart))
    assert r.exit_code == 0, r.output
    svg = chart.read_text()
    assert svg.startswith("<svg")
    assert "a100-80gb-1" in svg
    assert "GPUs 2/2" in svg


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, after checking the signature and the chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR"
    assert length == 13
    body = data[16 : 16 + length]
    (crc,) = struct.unpack(">I", data[16 + length : 20 + length])
    assert zlib.crc32(kind + body) == crc, "IHDR CRC mismatch"
    width, height = struct.unpack(">II", body[:8])
    return width, height


def test_chart_png_from_a_simulate_run(tmp_path):
    """`--chart FILE.png` (matplotlib, in the dev extra) writes a decodable PNG that shows both worlds."""
    import matplotlib.image

    w = tmp_path / "w.yaml"
    w.write_text(deployment("a", 3))
    chart = tmp_path / "use.png"
    r = run("simulate", "-f", str(w), "--nodes", "2x2xA100-80GB", "--chart", str(chart))
    assert r.exit_code == 0, r.output
    data = chart.read_bytes()
    width, height = _png_size(data)
    # figsize 12 x 2.5 inches (2 nodes) at 120 dpi
    assert (width, height) == (1440, 300), (width, height)
    assert 10_000 < len(data) < 1_000_000, len(data)
    assert data.endswith(b"IEND\xaeB`\x82"), "no IEND chunk: truncated"
    pixels = matplotlib.image.imread(str(chart))
    colours = {tuple(round(float(c) * 255) for c in px[:3]) for row in pixels[::4] for px in row[::4]}
    # the bars of both modes are drawn (report.simulate_chart.COLORS)
    assert (0xE4, 0x57, 0x2E) in colours
    assert (0x17, 0xA3, 0x98) in colours


def test_chart_png_without_matplotlib_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # find_spec and import both see it as absent
    w = tmp_path / "w.yaml"
    w.write_text(deployment("a", 1))
    err = fail(["simulate", "-f", str(w), "--nodes", "1x1xT4", "--chart", str(tmp_path / "c.png")], capsys)
    assert "pip install 'kubedra[chart]'" in err
    assert not (tmp_path / "c.png").exists()


def test_bad_chart_suffix_writes_nothing(tmp_path, capsys):
    w = tmp_path / "w.yaml"
    w.write_text(deployment("a", 1))
    err = fail(["simulate", "-f", str(w), "--nodes", "1x1xT4", "--chart", str(tmp_path / "c.gif")], capsys)
    assert ".svg or .png" in err
    assert not (tmp_path / "c.gif").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nodes", "4xH100"], "invalid node spec"),
        (["--nodes", "1x8xV100"], "unknown GPU model"),
        (["--nodes", "1x1xH100", "--gpu-mode", "mig-sometimes"], "unknown GPU mode"),
        (["--nodes", "1x1xH100", "--gpu-memory", "lots"], "--gpu-memory lots"),
        (["--nodes", "1x1xH100", "--sharing", "full"], "--sharing full"),
        (["--nodes", "1x1xH100", "--target-version", "1.30"], "1.30"),
        (["--mode", "dra"], "no cluster in the input"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, args, message):
    w = tmp_path / "w.yaml"
    w.write_text(deployment("a", 1))
    assert message in fail(["simulate", "-f", str(w), *args], capsys)


def test_malformed_yaml_names_file_and_line(tmp_path, capsys):
    w = tmp_path / "bad.yaml"
    w.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x\n")
    err = fail(["simulate", "-f", str(w), "--nodes", "1x1xT4"], capsys)
    assert "bad.yaml:" in err
    assert "invalid YAML" in err


def test_no_input_is_exit_2(capsys):
    assert "no input" in fail(["simulate", "--nodes", "1x1xT4"], capsys)


def test_fragments_and_classic_dra_are_reported_not_fatal():
    r = run(
        "simulate",
        "-f",
        str(CORPUS / "dra" / "nvidia-mig-parted-config.yaml"),
        "-f",
        str(CORPUS / "dra" / "nvidia-classic-dra-v1alpha2-gpu-test1.yaml"),
        "--nodes",
        "1x2xA100-40GB",
    )
    # the classic-DRA pods' pre-1.31 resourceClaims[].source is refused by the apiserver: not placed, exit 2
    assert r.exit_code == 2, r.output
    assert "nvidia-mig-parted-config.yaml:3" in r.output
    assert "not a Kubernetes object" in r.output
    assert "classic DRA (resource.k8s.io/v1alpha2)" in r.output


def test_pods_the_apiserver_refuses_are_not_placed():
    """Before, simulate placed both pods of NVIDIA's classic-DRA example (claims in the removed
    resourceClaims[].source form) with 0 GPUs and exit 0; validate calls them invalid. Now they are not simulated,
    with the apiserver's reason, and simulate exits 2."""
    r = run(
        "simulate",
        "-f",
        str(CORPUS / "dra" / "nvidia-classic-dra-v1alpha2-gpu-test1.yaml"),
        "--nodes",
        "1x2xT4",
    )
    assert r.exit_code == 2, r.output
    assert "pods placed                 0               0" in r.stdout
    assert "spec.resourceClaims[0].source: the pre-1.31 resourceClaims[].source form" in r.stdout
    assert "2 pod templates the apiserver refuses" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_an_extended_resource_requested_without_a_limit_is_not_placed(tmp_path):
    """KAI's real batch Job with its nvidia.com/gpu moved from limits to requests: the apiserver refuses it
    ("Limit must be set for non overcommitable resources") and validate says so; simulate placed both pods."""
    job = (CORPUS / "legacy-gpu" / "kai-batch-job.yaml").read_text()
    assert job.count("limits:") == 1
    f = tmp_path / "job.yaml"
    f.write_text(job.replace("limits:", "requests:"))
    r = run("simulate", "-f", str(f), "--nodes", "1x2xT4")
    assert r.exit_code == 2, r.output
    assert "pods placed                 0               0" in r.stdout
    assert (
        "resources.requests.nvidia.com/gpu: extended resource nvidia.com/gpu: limits must be set" in r.stdout
    )
    v = run("validate", str(f))
    assert v.exit_code == 1
    assert "limits must be set" in v.output


def test_dra_corpus_mig_claims_only_dra_can_place():
    r = run(
        "simulate",
        "-f",
        str(CORPUS / "dra" / "nvidia-quickstart-v1-gpu-test4-mig.yaml"),
        "--nodes",
        "1x8xA100-40GB",
        "--gpu-mode",
        "mig-static:all-balanced",
        "-o",
        "json",
        code=0,
    )
    out = json.loads(r.stdout)
    assert out["modes"]["dra"]["placed"] == 4
    assert out["modes"]["device-plugin"]["placed"] == 0


@pytest.mark.parametrize(
    ("affinity", "where"),
    [
        (
            "{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: true}]}}}",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions: expected a list, found a boolean",
        ),
        (
            "{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: a, values: 7}]}]}}}",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchFields[0].values: expected a list, found a number",
        ),
        ("{nodeAffinity: [x]}", "spec.affinity.nodeAffinity: expected an object, found a list"),
        ("[x]", "spec.affinity: expected an object, found a list"),
    ],
    ids=["expressions-bool", "values-number", "node-affinity-list", "affinity-list"],
)
def test_a_malformed_required_node_affinity_is_an_input_error(
    tmp_path: Path, capsys, affinity: str, where: str
) -> None:
    """Found by the mutation fuzz: matchExpressions: true in a pod's required node affinity crashed simulate
    (TypeError: 'bool' object is not iterable, exit 3); other malformed terms were skipped or stringified,
    so the pod was placed as if it had no such constraint. The API server refuses such a pod: one line at
    file:line naming the field, exit 2."""
    f = tmp_path / "pod.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        f"  affinity: {affinity}\n"
        "  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
    )
    err = fail(["simulate", str(f), "--nodes", "1x8xH100-80GB"], capsys)
    assert where in err, err
    assert f"{f}:" in err, err


def _placed(*args: str) -> dict[str, tuple[int, int]]:
    d = json.loads(run("simulate", *args, "-o", "json", code=0).stdout)
    return {mode: (m["placed"], m["pending"]) for mode, m in d["modes"].items()}


def test_a_job_is_placed_pod_by_pod_not_as_a_gang():
    """KAI's batch Job (parallelism == completions == 2, no batch-min-member) on one GPU: the real scheduler places
    one pod (a Job is no gang: k8s.io/api v0.37 JobSpec.Scheduling; KAI minMember 1). simulate placed 0 of 2."""
    job = CORPUS / "legacy-gpu" / "kai-batch-job.yaml"
    assert _placed("-f", str(job), "--nodes", "1x1xT4") == {"device-plugin": (1, 1), "dra": (1, 1)}


def test_a_kai_gang_job_is_a_gang_of_the_size_it_asks_for():
    """kai.scheduler/batch-min-member: "3" on a 5-pod Job: 2 GPUs hold no gang of 3, 4 GPUs place 4."""
    job = Path(__file__).resolve().parents[2] / "realworld" / "inputs" / "kai--batch-job-min-member.yaml"
    assert _placed("-f", str(job), "--nodes", "1x2xT4") == {"device-plugin": (0, 5), "dra": (0, 5)}
    assert _placed("-f", str(job), "--nodes", "1x4xT4") == {"device-plugin": (4, 1), "dra": (4, 1)}


EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_objects_not_simulated_leave_the_answer_incomplete_exit_2():
    """examples/legacy-gpu: two KAI fraction examples and a vLLM operator CR are not simulated (kubedra cannot
    tell which pods they make). simulate exited 0 over them; incomplete is never clean: 2, one line on stderr.
    Pending pods with --fail-on-pending still win (exit 1: what was found wins)."""
    args = ["simulate", str(EXAMPLES / "legacy-gpu"), "--nodes", "2x8xH100-80GB"]
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert "Not simulated (4)" in r.stdout  # the replaced PyTorchJob is listed, and is no gap
    err = [x for x in r.stderr.strip().splitlines() if not x.startswith("kubedra: next:")]
    assert len(err) == 1
    assert "3 objects not simulated" in err[0]
    assert "kai-gpu-fraction-pod.yaml:6" in err[0]
    assert run(*args, "--fail-on-pending").exit_code == 1  # the Volcano gang stays pending
    assert run(*args, "-o", "json").exit_code == 2


def test_what_the_cluster_would_not_run_either_is_no_gap(tmp_path):
    """A suspended Job and an object a later file defines again are listed under 'not simulated', but the
    cluster would run no pods for them either: the answer is complete, exit 0."""
    job = deployment("a", 1).replace("apps/v1", "batch/v1").replace("kind: Deployment", "kind: Job")
    job = job.replace("  replicas: 1\n", "  suspend: true\n").replace(
        "    spec:", "    spec:\n      restartPolicy: Never"
    )
    (tmp_path / "1-job.yaml").write_text(job)
    (tmp_path / "2-web.yaml").write_text(deployment("web", 1))
    (tmp_path / "3-web.yaml").write_text(deployment("web", 2))
    r = run("simulate", str(tmp_path), "--nodes", "1x4xL40S-48GB")
    assert r.exit_code == 0, r.output
    assert "Not simulated (2)" in r.stdout
    assert "pods placed                 2" in r.stdout
    assert f"defined again at {tmp_path / '3-web.yaml'}:2" in r.stdout


def test_chart_written_is_information_not_a_warning(tmp_path):
    f = tmp_path / "w.yaml"
    f.write_text(deployment("a", 1))
    chart = tmp_path / "use.svg"
    r = run("simulate", str(f), "--nodes", "1x2xL40S-48GB", "--chart", str(chart), "-o", "json", code=0)
    assert f"kubedra: chart written to {chart}\n" in r.stderr
    assert "warning: chart written" not in r.stderr


def test_a_workload_at_an_api_version_no_longer_served_is_refused_not_ignored():
    """The device plugin's 2017 DaemonSet and GKE's quickstart Deployment are extensions/v1beta1, which the
    apiserver stopped serving in 1.16 (the live agreement suite gets 404 for both). simulate read neither and
    said "0 pods simulated" with exit 0; now each is under 'not simulated' with the reason, and it exits 2."""
    inputs = Path(__file__).resolve().parents[2] / "realworld" / "inputs"
    r = run(
        "simulate",
        "-f",
        str(inputs / "legacy--device-plugin-2017-extensions-v1beta1.yaml"),
        "-f",
        str(inputs / "legacy--gke-quickstart-deployment-extensions-v1beta1.yaml"),
        "--nodes",
        "1x2xT4",
    )
    assert r.exit_code == 2, r.output
    assert "extensions/v1beta1 DaemonSet is not served by Kubernetes 1.37: removed in 1.16" in r.stdout
    assert "extensions/v1beta1 Deployment is not served by Kubernetes 1.37" in r.stdout
    assert "2 pod templates the apiserver refuses" in r.stderr


def test_a_scheduler_plugins_pod_group_is_a_gang(tmp_path):
    """Pods labelled scheduling.x-k8s.io/pod-group join a scheduler-plugins PodGroup (scheduling.x-k8s.io/v1alpha1),
    which the Coscheduling plugin places minMember at a time or not at all. simulate ignored both: of three
    one-GPU pods on a 2-GPU node it placed two, which Coscheduling never does; now none is placed."""
    pods = "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata:
  name: worker-{i}
  labels: {{scheduling.x-k8s.io/pod-group: train}}
spec:
  containers:
  - name: main
    image: busybox
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
        for i in range(3)
    )
    group = """---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train}
spec: {minMember: 3}
"""
    f = tmp_path / "gang.yaml"
    f.write_text(pods + group)
    r = run("simulate", "-f", str(f), "--nodes", "1x2xT4", "-o", "json", code=0)
    modes = json.loads(r.stdout)["modes"]
    assert modes["device-plugin"]["placed"] == 0, r.stdout
    assert modes["dra"]["placed"] == 0, r.stdout
    # without the group's minMember the pods are placed one by one
    f.write_text(pods + group.replace("minMember: 3", "minMember: 1"))
    r = run("simulate", "-f", str(f), "--nodes", "1x2xT4", "-o", "json", code=0)
    assert json.loads(r.stdout)["modes"]["device-plugin"]["placed"] == 2


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("gke--a100-jax-job-patch", "spec.template.spec.containers[0].image: image is required"),
        ("gke--triton-single-gpu", "serviceAccountName '$K8S_SA_NAME'"),
        ("gpu-operator--gfd-daemonset", "namespace 'FILLED BY THE OPERATOR'"),
    ],
)
def test_objects_the_apiserver_refuses_are_not_placed(name, reason):
    """Found by the live agreement suite: the 1.37 apiserver refuses GKE's JAX Job patch (no image, no
    restartPolicy), Triton's Deployment (serviceAccountName "$K8S_SA_NAME") and the GPU operator's DaemonSet
    templates (namespace "FILLED BY THE OPERATOR"), and validate says so; simulate placed their pods."""
    f = Path(__file__).resolve().parents[2] / "realworld" / "inputs" / f"{name}.yaml"
    r = run("simulate", "-f", str(f), "--nodes", "1x8xH100-80GB", "-o", "json")
    assert r.exit_code == 2, r.output
    modes = json.loads(r.stdout)["modes"]
    assert modes["device-plugin"]["placed"] == 0
    assert modes["dra"]["placed"] == 0
    assert reason in r.stderr
