"""kubedra policy: baseline generation, offline VAP evaluation, webhook skeletons."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubedra.cli import cli
from kubedra.errors import InputError, UsageError
from kubedra.policy.evaluate import Evaluator, resource_of, selector_matches
from kubedra.policy.generate import PolicyOptions, available, generate, render
from kubedra.sources.files import parse_text
from kubedra.validate.engine import validate_texts


def baseline(**opts: Any) -> str:
    return render(generate(PolicyOptions(**opts)))


def verdicts(policy_text: str, objects: str, **kw: Any) -> list[tuple[str, str, str]]:
    ev = Evaluator(parse_text(policy_text, "policy.yaml").documents, "1.37")
    docs = parse_text(objects, "in.yaml").documents
    ev.add_params(d for d in docs if d.kind == "ConfigMap")
    return [(v.document.name, v.policy, v.message) for v in ev.evaluate(docs, **kw)]


def pod(name: str, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/name": name}}
    base = {
        "containers": [
            {
                "name": "c",
                "image": "repo/app:1.0",
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
            }
        ]
    }
    for k, v in spec.items():
        if k == "metadata":
            meta.update(v)
        elif k == "container":
            base["containers"][0].update(v)
        else:
            base[k] = v
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": base}


def dump(*objs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(objs, sort_keys=False)


def test_generated_baseline_is_valid_and_starts_in_warn_audit() -> None:
    text = baseline()
    assert validate_texts([("p.yaml", text)], "1.37").valid
    objs = list(yaml.safe_load_all(text))
    kinds = [o["kind"] for o in objs]
    assert kinds.count("ValidatingAdmissionPolicy") == len(available()) == 6
    bindings = [o for o in objs if o["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert all(b["spec"]["validationActions"] == ["Warn", "Audit"] for b in bindings)
    assert "switch to [Deny]" in text  # the data files' comments reach the output
    assert [o["metadata"]["name"] for o in objs if o["kind"] == "ConfigMap"] == [
        "kubedra-gpu-hygiene",
        "kubedra-required-labels",
    ]


def test_generate_options() -> None:
    objs = list(
        yaml.safe_load_all(
            baseline(
                only=("gpu-known-device-classes",),
                device_classes=("gpu.nvidia.com", "a100.example.com"),
                params_namespace="gpu-system",
                actions=("Deny",),
            )
        )
    )
    assert [o["kind"] for o in objs] == [
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ConfigMap",
    ]
    assert objs[1]["spec"]["validationActions"] == ["Deny"]
    assert objs[1]["spec"]["paramRef"]["namespace"] == "gpu-system" == objs[2]["metadata"]["namespace"]
    assert objs[2]["data"]["deviceClasses"] == "gpu.nvidia.com,a100.example.com"
    with pytest.raises(UsageError):
        generate(PolicyOptions(actions=("Deny", "Warn")))
    with pytest.raises(UsageError):
        generate(PolicyOptions(only=("nope",)))


@pytest.mark.parametrize(
    ("image", "bad"),
    [
        ("nginx", True),
        ("nginx:latest", True),
        ("registry:5000/team/nginx", True),
        ("registry:5000/team/nginx:1.25", False),
        ("nginx@sha256:" + "a" * 64, False),
    ],
)
def test_latest_tag_policy(image: str, bad: bool) -> None:
    got = verdicts(baseline(only=("disallow-latest-tag",)), dump(pod("p", container={"image": image})))
    assert bool(got) == bad
    if bad:
        assert got[0][2] == f"images must be pinned to a tag other than latest (or a digest): c={image}"


def test_privileged_and_requests_policies_on_workloads() -> None:
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app.kubernetes.io/name": "d"}},
        "spec": {
            "template": {
                "spec": pod("x", container={"securityContext": {"privileged": True}, "resources": {}})["spec"]
            }
        },
    }
    got = verdicts(baseline(), dump(dep))
    assert ("d", "kubedra-disallow-privileged", "privileged containers are not allowed: c") in got
    assert (
        "d",
        "kubedra-require-requests-limits",
        "containers need cpu/memory requests and a memory limit: c",
    ) in got
    assert len(got) == 2


def test_required_labels_from_params_and_controller_pods_skipped() -> None:
    policy = baseline(only=("require-labels",), required_labels=("team", "app.kubernetes.io/name"))
    owned = pod(
        "owned",
        metadata={
            "labels": {},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "r", "uid": "u", "apiVersion": "apps/v1"}],
        },
    )
    got = verdicts(policy, dump(pod("p"), owned))
    assert got == [("p", "kubedra-require-labels", "missing required labels: team")]


def test_params_missing_follows_parameter_not_found_action() -> None:
    policy = baseline(only=("require-labels",))
    without_params = "\n---\n".join(p for p in policy.split("\n---\n") if "\nkind: ConfigMap" not in p)
    (v,) = verdicts(without_params, dump(pod("p")))
    assert "no params found" in v[2]
    assert (
        verdicts(
            without_params.replace("parameterNotFoundAction: Deny", "parameterNotFoundAction: Allow"),
            dump(pod("p")),
        )
        == []
    )


def test_gpu_pods_must_not_select_dra_pools() -> None:
    policy = baseline(only=("gpu-no-device-plugin-on-dra-pools",), dra_pool_label="example.com/dra")
    gpu = {
        "resources": {
            "requests": {"cpu": "1", "memory": "1Gi"},
            "limits": {"memory": "1Gi", "nvidia.com/gpu": 1},
        }
    }
    on_dra = pod("bad", container=gpu, nodeSelector={"example.com/dra": "true"})
    affinity = pod(
        "bad2",
        container=gpu,
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "example.com/dra", "operator": "Exists"}]}
                    ]
                }
            }
        },
    )
    elsewhere = pod("ok", container=gpu, nodeSelector={"example.com/dra": "false"})
    claims = pod("dra", nodeSelector={"example.com/dra": "true"})
    got = verdicts(policy, dump(on_dra, affinity, elsewhere, claims))
    assert [g[0] for g in got] == ["bad", "bad2"]
    assert "must not select DRA node pools (example.com/dra)" in got[0][2]


def test_claims_must_name_known_device_classes() -> None:
    policy = baseline(only=("gpu-known-device-classes",))
    rct = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t"},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
            }
        },
    }
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "a",
                        "firstAvailable": [
                            {"name": "x", "deviceClassName": "mig.nvidia.com"},
                            {"name": "y", "deviceClassName": "rogue"},
                        ],
                    }
                ]
            }
        },
    }
    got = verdicts(policy, dump(rct, claim))
    assert got == [
        (
            "c",
            "kubedra-gpu-known-device-classes",
            "DeviceClass not in the allowed list (gpu.nvidia.com, mig.nvidia.com, vfio.gpu.nvidia.com): rogue",
        )
    ]


POLICY = textwrap.dedent(
    """\
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata: {name: replicas}
    spec:
      failurePolicy: FAILURE
      matchConstraints:
        resourceRules:
        - apiGroups: ["apps"]
          apiVersions: ["v1"]
          operations: ["CREATE"]
          resources: ["deployments"]
        objectSelector:
          matchExpressions: [{key: skip, operator: DoesNotExist}]
      matchConditions:
      - name: not-system
        expression: "!object.metadata.name.startsWith('system-')"
      variables:
      - name: replicas
        expression: object.spec.replicas
      - name: broken
        expression: object.spec.nope
      validations:
      - expression: variables.replicas <= 5
        messageExpression: "'too many replicas: ' + string(variables.replicas)"
      - expression: variables.broken == 1
        message: uses broken
      - expression: "object.metadata.labels.team != ''"
        message: needs team
    ---
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicyBinding
    metadata: {name: replicas-binding}
    spec:
      policyName: replicas
      validationActions: [Deny]
      matchResources:
        namespaceSelector:
          matchLabels: {env: prod}
    """
)


def deployment(
    name: str, replicas: int, ns: str = "prod", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {"replicas": replicas}}


def test_evaluator_semantics() -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}}
    dev = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dev", "labels": {"env": "dev"}}}
    objs = dump(
        ns,
        dev,  # its labels decide the binding's namespaceSelector (without it: undecided)
        deployment("big", 9, labels={"team": "a"}),
        deployment("system-x", 9),  # matchCondition false
        deployment("skipped", 9, labels={"skip": "y"}),  # objectSelector
        deployment("dev", 9, ns="dev"),  # namespaceSelector of the binding
        deployment("nolabels", 1),
    )
    fail = verdicts(POLICY.replace("FAILURE", "Fail"), objs)
    assert fail == [
        ("big", "replicas", "too many replicas: 9"),
        ("big", "replicas", "variable 'broken' resulted in error: no such key: nope"),
        ("nolabels", "replicas", "variable 'broken' resulted in error: no such key: nope"),
        (
            "nolabels",
            "replicas",
            "expression \"object.metadata.labels.team != ''\" resulted in error: no such key: labels",
        ),
    ]
    ignore = verdicts(POLICY.replace("FAILURE", "Ignore"), objs)
    assert ignore == [("big", "replicas", "too many replicas: 9")]


def test_unbound_policy_is_tested_as_deny_and_bad_cel_is_input_error() -> None:
    unbound = POLICY.split("---")[0].replace("FAILURE", "Ignore")
    ev = Evaluator(parse_text(unbound, "p.yaml").documents)
    (v,) = ev.evaluate(parse_text(dump(deployment("big", 9, labels={"team": "a"})), "in.yaml").documents)
    assert v.binding is None
    assert v.outcome == "denied"
    with pytest.raises(InputError) as exc:
        Evaluator(
            parse_text(
                unbound.replace("variables.replicas <= 5", "variables.replicas <="), "p.yaml"
            ).documents
        )
    assert exc.value.location is not None
    assert exc.value.location.line == 23


def test_selectors_and_resources() -> None:
    assert resource_of("Deployment") == "deployments"
    assert resource_of("NetworkPolicy") == "networkpolicies"
    assert resource_of("DeviceClass") == "deviceclasses"
    assert resource_of("Ingress") == "ingresses"
    sel = {
        "matchLabels": {"a": "1"},
        "matchExpressions": [{"key": "b", "operator": "NotIn", "values": ["x"]}],
    }
    assert selector_matches(sel, {"a": "1"})
    assert selector_matches(sel, {"a": "1", "b": "y"})
    assert not selector_matches(sel, {"a": "1", "b": "x"})
    assert not selector_matches(sel, {})
    assert selector_matches(None, {})
    assert selector_matches({}, {"z": "1"})


WEBHOOK = textwrap.dedent(
    """\
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingWebhookConfiguration
    metadata: {name: gpu-guard}
    webhooks:
    - name: pods.gpu-guard.example.com
      admissionReviewVersions: ["v1"]
      sideEffects: None
      failurePolicy: Ignore
      clientConfig:
        service: {namespace: guard, name: gpu-guard, path: /validate}
      rules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["pods"]
        scope: Namespaced
      namespaceSelector:
        matchLabels: {gpu: "true"}
      matchConditions:
      - name: has-gpu
        expression: "object.spec.containers.exists(c, has(c.resources.limits))"
    """
)


def test_from_webhook_skeleton() -> None:
    runner = CliRunner()
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "wh.yaml")
        with open(path, "w") as fh:
            fh.write(WEBHOOK)
        res = runner.invoke(cli, ["policy", "from-webhook", path])
    assert res.exit_code == 0, res.output
    text = res.stdout
    policy, binding = list(yaml.safe_load_all(text))
    assert policy["metadata"]["name"] == "gpu-guard-pods.gpu-guard.example.com"
    spec = policy["spec"]
    assert spec["failurePolicy"] == "Ignore"
    assert spec["matchConstraints"]["resourceRules"][0]["resources"] == ["pods"]
    assert spec["matchConstraints"]["namespaceSelector"] == {"matchLabels": {"gpu": "true"}}
    assert spec["matchConditions"][0]["name"] == "has-gpu"
    assert "TODO" in spec["validations"][0]["message"]
    assert "# TODO" in text
    assert "service guard/gpu-guard/validate" in text
    assert binding["spec"]["validationActions"] == ["Warn", "Audit"]
    assert validate_texts([("s.yaml", text)], "1.37").valid


def test_policy_cli_exit_codes(tmp_path: Any) -> None:
    runner = CliRunner()
    pol = tmp_path / "p.yaml"
    pol.write_text(baseline(only=("disallow-privileged",)))
    ok = tmp_path / "ok.yaml"
    ok.write_text(dump(pod("fine")))
    bad = tmp_path / "bad.yaml"
    bad.write_text(dump(pod("root", container={"securityContext": {"privileged": True}})))
    assert runner.invoke(cli, ["policy", "test", "--policy", str(pol), str(ok)]).exit_code == 0
    res = runner.invoke(cli, ["policy", "test", "--policy", str(pol), str(bad), "-o", "json"])
    assert res.exit_code == 1
    data = yaml.safe_load(res.stdout)
    (v,) = data["violations"]
    assert v["outcome"] == "warned"
    assert v["source"] == {"file": str(bad), "line": 1}
    gen = runner.invoke(cli, ["policy", "generate", "--list"])
    assert gen.exit_code == 0, gen.output
    assert gen.stdout.split() == available()


def test_policy_cel_compile_error_is_one_line(tmp_path: Any) -> None:
    """The field, the compiler's first line, no caret diagram; exit 2."""
    from kubedra.testing.cli import run

    pol = tmp_path / "p.yaml"
    pol.write_text(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n"
        "spec:\n  validations:\n  - expression: 'object.spec.containers.all(c, '\n"
    )
    obj = tmp_path / "o.yaml"
    obj.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    res = run("policy", "test", "--policy", str(pol), str(obj))
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1, res.stderr
    assert (
        "p.yaml:6: ValidatingAdmissionPolicy p: spec.validations[0].expression does not compile:"
        in res.stderr
    )
    assert "Syntax error" in res.stderr
    assert "^" not in res.stderr


def test_generate_allows_the_device_classes_migrate_writes(tmp_path: Any) -> None:
    """The time-slicing DeviceClass migrate writes must not trip the allowed-class policy: the classes
    defined in `policy generate`'s inputs join the allowed list (after the default list, or --device-class)."""
    from pathlib import Path

    sharing = Path(__file__).resolve().parents[2] / "data" / "sharing" / "gpu-operator-plugin-config.yaml"
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "infer", "namespace": "default"},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "infer"}},
            "template": {
                "metadata": {"labels": {"app": "infer"}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "repo/app:1.0", "resources": {"limits": {"nvidia.com/gpu": 1}}}
                    ]
                },
            },
        },
    }
    src = tmp_path / "in.yaml"
    src.write_text(sharing.read_text() + "---\n" + dump(deployment))
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(cli, ["migrate", str(src), "--out", str(out)]).exit_code == 0
    migrated = (out / "in.yaml").read_text()
    assert "gpu-time-slicing.gpu.nvidia.com" in migrated

    def test_with(*generate_args: str) -> int:
        gen = runner.invoke(cli, ["policy", "generate", "--only", "gpu-known-device-classes", *generate_args])
        assert gen.exit_code == 0, gen.output
        pol = tmp_path / "policy.yaml"
        pol.write_text(gen.stdout)
        return runner.invoke(cli, ["policy", "test", "--policy", str(pol), str(out)]).exit_code

    assert test_with() == 1  # the default list does not know the migrated class
    assert test_with(str(out)) == 0
    assert test_with("-f", str(out), "--device-class", "gpu.nvidia.com") == 0
    assert test_with("--device-class", "gpu.nvidia.com") == 1
    gen = runner.invoke(cli, ["policy", "generate", "--only", "gpu-known-device-classes", str(out)])
    assert gen.exit_code == 0, gen.output
    params = yaml.safe_load_all(gen.stdout)
    [cm] = [d for d in params if d and d.get("kind") == "ConfigMap"]
    assert cm["data"]["deviceClasses"].split(",") == [
        "gpu.nvidia.com",
        "mig.nvidia.com",
        "vfio.gpu.nvidia.com",
        "gpu-time-slicing.gpu.nvidia.com",
    ]
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [unclosed\n")
    from kubedra.testing.cli import run

    assert run("policy", "generate", str(bad)).exit_code == 2


NS_POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-plugin-gpus-in-prod}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
    namespaceSelector:
      matchLabels: {env: prod}
  validations:
  - expression: "!object.spec.containers.exists(c, has(c.resources.limits) && 'nvidia.com/gpu' in c.resources.limits)"
    message: no device-plugin GPUs in prod
"""


def test_a_namespace_selector_on_a_namespace_not_in_the_inputs_is_undecided(tmp_path: Any) -> None:
    """The policy matches by the Namespace's labels, and the Namespace is not among the inputs: kubedra said
    'nothing violates' (exit 0) from a Namespace it had made up without labels; now the verdict is undecided,
    named on stderr, exit 2. With the Namespace given, the answer is decided (denied, exit 1)."""
    from kubedra.testing.cli import run

    pol = tmp_path / "p.yaml"
    pol.write_text(NS_POLICY)
    gpu_pod = pod("train", container={"resources": {"limits": {"nvidia.com/gpu": 1}}})
    gpu_pod["metadata"]["namespace"] = "ml"
    obj = tmp_path / "pod.yaml"
    obj.write_text(dump(gpu_pod))
    res = run("policy", "test", "--policy", str(pol), str(obj), "-o", "json")
    assert res.exit_code == 2, res.output
    data = json.loads(res.stdout)
    assert data["violations"] == []
    (u,) = data["undecided"]
    assert u["outcome"] == "undecided"
    assert u["object"]["name"] == "train"
    assert "Namespace ml, which is not among the inputs" in u["message"]
    assert f"kubedra: undecided: {obj}:1: Pod ml/train: policy no-plugin-gpus-in-prod: " in res.stderr
    table = run("policy", "test", "--policy", str(pol), str(obj))
    assert table.exit_code == 2
    assert "UNDECIDED" in table.stdout
    assert "1 not decided" in table.stderr

    ns = tmp_path / "ns.yaml"
    for labels, code in (({"env": "prod"}, 1), ({"env": "dev"}, 0)):
        ns.write_text(
            dump({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": labels}})
        )
        res = run("policy", "test", "--policy", str(pol), str(obj), str(ns), "-o", "json")
        assert res.exit_code == code, res.output
        assert json.loads(res.stdout)["undecided"] == []
        assert "undecided" not in res.stderr
    # a selector on the name label alone is decided without the Namespace (the apiserver sets that label)
    by_name = NS_POLICY.replace(
        "matchLabels: {env: prod}",
        "matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}]",
    )
    pol.write_text(by_name)
    assert run("policy", "test", "--policy", str(pol), str(obj)).exit_code == 1
    # a name requirement that fails decides whatever the other labels say
    pol.write_text(
        NS_POLICY.replace(
            "matchLabels: {env: prod}", "matchLabels: {env: prod, kubernetes.io/metadata.name: other}"
        )
    )
    assert run("policy", "test", "--policy", str(pol), str(obj)).exit_code == 0


def test_a_violation_wins_over_undecided_verdicts(tmp_path: Any) -> None:
    """one Pod violates (its Namespace is given, labelled prod), another is undecided (its Namespace
    is not among the inputs): policy test said exit 2, so the violation hid behind 'input error'; now a
    violation found is exit 1, and the undecided verdict is still listed and named on stderr."""
    from kubedra.testing.cli import run

    pol = tmp_path / "p.yaml"
    pol.write_text(NS_POLICY)
    pods = []
    for ns in ("prod-a", "ml"):
        p = pod(f"train-{ns}", container={"resources": {"limits": {"nvidia.com/gpu": 1}}})
        p["metadata"]["namespace"] = ns
        pods.append(dump(p))
    prod = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "prod-a", "labels": {"env": "prod"}},
    }
    obj = tmp_path / "objs.yaml"
    obj.write_text("---\n".join([*pods, dump(prod)]))
    res = run("policy", "test", "--policy", str(pol), str(obj), "-o", "json")
    assert res.exit_code == 1, res.output
    data = json.loads(res.stdout)
    assert [v["object"]["name"] for v in data["violations"]] == ["train-prod-a"]
    assert [u["object"]["name"] for u in data["undecided"]] == ["train-ml"]
    assert "kubedra: undecided: " in res.stderr


def test_an_expression_reading_namespace_object_of_a_namespace_not_in_the_inputs_is_undecided(
    tmp_path: Any,
) -> None:
    from kubedra.testing.cli import run

    pol = tmp_path / "p.yaml"
    pol.write_text(
        NS_POLICY.replace("    namespaceSelector:\n      matchLabels: {env: prod}\n", "").replace(
            '- expression: "!object',
            "- expression: \"namespaceObject.metadata.labels['env'] != 'prod' || !object",
        )
    )
    obj = tmp_path / "pod.yaml"
    obj.write_text(dump(pod("train", container={"resources": {"limits": {"nvidia.com/gpu": 1}}})))
    res = run("policy", "test", "--policy", str(pol), str(obj), "-o", "json")
    assert res.exit_code == 2, res.output
    (u,) = json.loads(res.stdout)["undecided"]
    assert "read the object of Namespace default" in u["message"]
    ns = tmp_path / "ns.yaml"
    ns.write_text(
        dump(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "default", "labels": {"env": "prod"}},
            }
        )
    )
    assert run("policy", "test", "--policy", str(pol), str(obj), str(ns)).exit_code == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no manifests found in "),
        ("# only a comment\n---\n", "no manifests found in "),
        (
            "metadata: {name: x}\nspec: {containers: [{name: c, image: 'x:latest'}]}\n",
            "not a Kubernetes object (no apiVersion/kind)",
        ),
    ],
)
def test_nothing_tested_is_not_nothing_violates(tmp_path: Any, text: str, message: str) -> None:
    """No object tested (an empty file, a fragment without apiVersion/kind) said '0 violations' with exit 0;
    now one line on stderr, exit 2."""
    from kubedra.testing.cli import run

    pol = tmp_path / "p.yaml"
    pol.write_text(baseline(only=("disallow-latest-tag",)))
    obj = tmp_path / "o.yaml"
    obj.write_text(text)
    res = run("policy", "test", "--policy", str(pol), str(obj))
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1, res.stderr
    assert message in res.stderr, res.stderr


@pytest.mark.parametrize(
    ("metadata", "line", "why"),
    [
        ("{name: p, labels: true}", 4, "metadata.labels is a boolean, not a mapping"),
        ("{name: p, labels: [[a]]}", 4, "metadata.labels is a list, not a mapping"),
        ("{name: p, annotations: x}", 4, "metadata.annotations is a string, not a mapping"),
        ("[p]", 4, "metadata is a list, not a mapping"),
    ],
)
def test_an_object_the_apiserver_cannot_decode_is_an_input_error(
    tmp_path: Path, metadata: str, line: int, why: str
) -> None:
    """Found by the mutation fuzz: labels that are not a mapping crashed policy test (AttributeError, exit 3)
    when a policy's objectSelector read them. The API server cannot decode such an object into ObjectMeta, so
    no admission policy ever sees it: policy test says so, on one line at file:line, exit 2."""
    from kubedra.testing.cli import run

    policy = tmp_path / "policy.yaml"
    policy.write_text(run("policy", "generate", code=0).stdout)
    obj = tmp_path / "pod.yaml"
    obj.write_text(
        f"apiVersion: v1\nkind: Pod\n\nmetadata: {metadata}\nspec:\n  containers: [{{name: c, image: i}}]\n"
    )
    res = run("policy", "test", str(obj), "--policy", str(policy), code=2)
    assert res.stdout == ""
    assert res.stderr == (
        f"kubedra: error: {obj}:{line}: Pod p: {why}: the API server refuses the object before any admission "
        "policy sees it\n"
    ).replace("Pod p:", "Pod :" if metadata == "[p]" else "Pod p:")


def test_policy_generate_writes_a_file_with_o(tmp_path: Any) -> None:
    """policy generate had no -o (snapshot's -o FILE writes its artefact); now -o FILE writes the
    same YAML atomically and prints nothing, and a bad input writes nothing."""
    from kubedra.testing.cli import run

    out = tmp_path / "policies.yaml"
    res = run("policy", "generate", "--only", "disallow-latest-tag", "-o", str(out))
    assert (res.exit_code, res.stdout) == (0, ""), res.output
    assert out.read_text() == run("policy", "generate", "--only", "disallow-latest-tag").stdout
    assert "kind: ValidatingAdmissionPolicy" in out.read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [unclosed\n")
    res = run("policy", "generate", str(bad), "-o", str(tmp_path / "none.yaml"))
    assert res.exit_code == 2
    assert not (tmp_path / "none.yaml").exists()


_SELECTOR_POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
    objectSelector:
      matchExpressions:
      - EXPR
  validations:
  - expression: 'false'
"""


@pytest.mark.parametrize(
    "expr",
    [
        "{key: tier, operator: Gt, values: ['1']}",  # Gt/Lt are node selector operators only
        "{key: tier, operator: Equals, values: [a]}",  # not an operator
        "{key: tier, operator: In, values: []}",  # In needs values
        "{key: tier, operator: Exists, values: [a]}",  # Exists takes none
    ],
)
def test_an_invalid_selector_in_a_policy_is_refused_like_the_apiserver_does(tmp_path: Any, expr: str) -> None:
    """The apiserver refuses a ValidatingAdmissionPolicy whose objectSelector is invalid, so it denies nothing:
    exit 2 at the field. The old matcher skipped unknown operators (the policy matched and denied: exit 1)."""
    from kubedra.testing.cli import run

    pol = tmp_path / "p.yaml"
    pol.write_text(_SELECTOR_POLICY.replace("EXPR", expr))
    obj = tmp_path / "o.yaml"
    obj.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, labels: {tier: '2'}}\n")
    res = run("policy", "test", "--policy", str(pol), str(obj))
    assert res.exit_code == 2, res.output
    assert res.stdout == "", res.output
    assert res.stderr.count("\n") == 1, res.stderr
    assert (
        "p.yaml:10: ValidatingAdmissionPolicy p: spec.matchConstraints.objectSelector.matchExpressions[0]"
        in (res.stderr)
    )
    assert "the API server refuses this ValidatingAdmissionPolicy" in res.stderr


def test_an_invalid_param_selector_in_a_binding_is_refused() -> None:
    binding = (
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n"
        "metadata: {name: b}\nspec:\n  policyName: p\n  validationActions: [Deny]\n"
        "  paramRef:\n    selector: {matchLabels: {'bad key!': x}}\n"
    )
    policy = _SELECTOR_POLICY.replace("    objectSelector:\n      matchExpressions:\n      - EXPR\n", "")
    with pytest.raises(InputError) as exc:
        Evaluator(parse_text(policy + "---\n" + binding, "p.yaml").documents)
    assert "spec.paramRef.selector.matchLabels.bad key!: invalid label key" in str(exc.value)


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("spec: [1, 2]", "spec must be an object, not a list"),
        ("spec:\n  validations: {expression: 'true'}", "spec.validations must be a list, not a mapping"),
        ("spec:\n  validations: [7]", "spec.validations[0] must be an object, not a number"),
        ("spec:\n  matchConstraints: [x]", "spec.matchConstraints must be an object, not a list"),
    ],
)
def test_a_policy_of_the_wrong_shape_is_an_input_error(tmp_path: Path, spec: str, said: str) -> None:
    """A ValidatingAdmissionPolicy whose spec (or one of its lists) has a shape the API server's schema refuses
    is one line and exit 2, naming the field (it was an AttributeError, exit 3)."""
    pol = tmp_path / "pol.yaml"
    pol.write_text(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n"
        f"metadata:\n  name: p\n{spec}\n"
    )
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: [{name: c, image: i}]\n"
    )
    from kubedra.testing.cli import run

    res = run("policy", "test", "--policy", str(pol), str(pod))
    assert res.exit_code == 2, res.output
    assert said in res.output
    assert "Traceback" not in res.output


def test_quantity_in_a_policy_is_parsed_by_the_release_apimachinery() -> None:
    # k8s.io/apimachinery v0.38.0-beta.0 takes a 19-digit value within int64 onto the int64 path (isInteger true);
    # v0.37.2 makes it an inf.Dec (quantity.nineteenDigitInt64 in data/versions.yaml).
    policy = textwrap.dedent(
        """\
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata: {name: q}
        spec:
          matchConstraints:
            resourceRules:
            - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}
          validations:
          - expression: "!quantity('9223372036854775807').isInteger()"
            message: an integer
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicyBinding
        metadata: {name: q-binding}
        spec: {policyName: q, validationActions: [Deny]}
        """
    )
    docs = parse_text(dump(deployment("d", 1, ns="default")), "in.yaml").documents
    found = {}
    for version in ("1.37", "1.38"):
        ev = Evaluator(parse_text(policy, "policy.yaml").documents, version)
        found[version] = [v.message for v in ev.evaluate(docs)]
    assert found == {"1.37": [], "1.38": ["an integer"]}
