"""kubedra validate: schemas, DRA rules from validation.go, CEL, quantities, references, CLI."""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubedra.cli import cli
from kubedra.validate.engine import ValidationResult, validate_texts

RCT = textwrap.dedent(
    """\
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata:
      name: t
    spec:
      spec:
        devices:
          requests:
          - name: gpu
            exactly:
              deviceClassName: gpu.nvidia.com
    """
)
SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {
        "driver": "gpu.nvidia.com",
        "nodeName": "n1",
        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {"type": {"string": "gpu"}},
                "capacity": {"memory": {"value": "80Gi"}},
            }
        ],
    },
}


def check(obj: Any, target: str = "1.37", **kw: Any) -> ValidationResult:
    text = obj if isinstance(obj, str) else yaml.safe_dump(obj, sort_keys=False)
    return validate_texts([("in.yaml", text)], target, **kw)


def messages(obj: Any, target: str = "1.37") -> list[tuple[str | None, str]]:
    return [(e.path, e.message) for e in check(obj, target).errors]


def rct_with(request: dict[str, Any], **devices: Any) -> dict[str, Any]:
    obj = yaml.safe_load(RCT)
    obj["spec"]["spec"]["devices"]["requests"] = [request]
    obj["spec"]["spec"]["devices"].update(devices)
    return obj


def test_valid_objects() -> None:
    assert check(RCT).valid
    assert check(SLICE).valid


def test_strict_schema_reports_unknown_fields_with_line() -> None:
    result = check(RCT.replace("        exactly:\n", "        exactly:\n          bogus: 1\n"))
    (err,) = result.errors
    assert err.message == "unknown field 'bogus'"
    assert err.line == 11
    assert err.path == "spec.spec.devices.requests[0].exactly.bogus"


def test_v1beta1_shape_in_v1_is_an_error() -> None:
    text = RCT.replace("        exactly:\n          deviceClassName", "        deviceClassName")
    msgs = messages(text)
    assert ("spec.spec.devices.requests[0].deviceClassName", "unknown field 'deviceClassName'") in msgs
    assert any("exactly one of exactly or firstAvailable" in m for _, m in msgs)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            "apiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata: {name: d}\nspec: {}\n",
            "extensions/v1beta1 DaemonSet is not served by Kubernetes 1.37: removed in 1.16; use apps/v1 DaemonSet",
        ),
        (
            "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: i}\nspec: {}\n",
            "extensions/v1beta1 Ingress is not served by Kubernetes 1.37: removed in 1.22; use networking.k8s.io/v1 Ingress",
        ),
        (
            "apiVersion: resource.k8s.io/v1alpha4\nkind: ResourceClaim\nmetadata: {name: c}\nspec: {}\n",
            "resource.k8s.io/v1alpha4 ResourceClaim: no Kubernetes release serves this version; "
            "use resource.k8s.io/v1 ResourceClaim",
        ),
    ],
)
def test_removed_and_never_served_versions_are_invalid(doc: str, message: str) -> None:
    """The apiserver refuses them: invalid (exit 1) with what removed them and what replaces them."""
    result = check(doc, "1.37")
    assert not result.valid
    assert [e.message for e in result.errors] == [message]
    assert not result.not_schema_checked


def test_api_not_served_at_target() -> None:
    assert messages(RCT, "1.34") == []
    text = RCT.replace("resource.k8s.io/v1", "resource.k8s.io/v1alpha2")
    assert messages(text) == [
        (
            "apiVersion",
            "resource.k8s.io/v1alpha2 ResourceClaimTemplate is not served by Kubernetes 1.37: removed in 1.31; "
            "use resource.k8s.io/v1 ResourceClaimTemplate (classic DRA: no mechanical conversion, redesign the claim)",
        )
    ]
    pg = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\nspec:\n  schedulingPolicy: {basic: {}}\n"
    assert check(pg, "1.37").valid
    assert not check(pg, "1.36").valid


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        ({"name": "Bad", "exactly": {"deviceClassName": "c"}}, "is not a DNS label"),
        (
            {"name": "a", "exactly": {"deviceClassName": "c", "allocationMode": "Some"}},
            "must be one of ExactCount, All",
        ),
        (
            {"name": "a", "exactly": {"deviceClassName": "c", "allocationMode": "All", "count": 2}},
            "must not be set when allocationMode is All",
        ),
        ({"name": "a", "exactly": {"deviceClassName": "c", "count": -1}}, "must be greater than zero"),
        (
            {
                "name": "a",
                "exactly": {"deviceClassName": "c"},
                "firstAvailable": [{"name": "x", "deviceClassName": "c"}],
            },
            "not both",
        ),
        (
            {"name": "a", "firstAvailable": [{"name": f"s{i}", "deviceClassName": "c"} for i in range(9)]},
            "too many subrequests: 9, the limit is 8",
        ),
        (
            {
                "name": "a",
                "exactly": {"deviceClassName": "c", "tolerations": [{"operator": "Equal", "value": "x"}]},
            },
            "must be Exists when key is empty",
        ),
        (
            {
                "name": "a",
                "exactly": {
                    "deviceClassName": "c",
                    "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}],
                },
            },
            "must be empty when operator is Exists",
        ),
        (
            {
                "name": "a",
                "exactly": {"deviceClassName": "c", "tolerations": [{"key": "k", "effect": "Evict"}]},
            },
            "unsupported effect",
        ),
        (
            {"name": "a", "exactly": {"deviceClassName": "c", "capacity": {"requests": {"memory": "lots"}}}},
            "invalid quantity 'lots'",
        ),
        (
            {
                "name": "a",
                "exactly": {
                    "deviceClassName": "c",
                    "selectors": [{"cel": {"expression": "device.driver =="}}],
                },
            },
            "CEL: compilation failed",
        ),
        (
            {
                "name": "a",
                "exactly": {"deviceClassName": "c", "selectors": [{"cel": {"expression": "1 + 1"}}]},
            },
            "must evaluate to bool",
        ),
        (
            {
                "name": "a",
                "exactly": {
                    "deviceClassName": "c",
                    "selectors": [{"cel": {"expression": "true || " * 1300 + "true"}}],
                },
            },
            "Too long",
        ),
    ],
)
def test_request_rules(request_: dict[str, Any], expected: str) -> None:
    msgs = messages(rct_with(request_))
    assert any(expected in m for _, m in msgs), msgs


def test_request_count_limit_and_duplicates() -> None:
    obj = rct_with({"name": "a", "exactly": {"deviceClassName": "c"}})
    obj["spec"]["spec"]["devices"]["requests"] = [{"name": "a", "exactly": {"deviceClassName": "c"}}] * 33
    msgs = [m for _, m in messages(obj)]
    assert "too many requests: 33, the limit is 32" in msgs
    assert "duplicate request name 'a'" in msgs


def test_constraints_and_config_reference_requests() -> None:
    obj = rct_with(
        {"name": "a", "firstAvailable": [{"name": "big", "deviceClassName": "c"}]},
        constraints=[{"requests": ["a/big", "a/small"], "matchAttribute": "gpu.nvidia.com/parentUUID"}],
        config=[
            {"requests": ["a"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {"x": "y" * 11000}}}
        ],
    )
    msgs = messages(obj)
    assert msgs == [
        (
            "spec.spec.devices.constraints[0].requests[1]",
            "'a/small' does not name a request (or request/subrequest) of this claim",
        ),
        ("spec.spec.devices.config[0].opaque.parameters", "must be no more than 10240 bytes"),
    ]


def test_slice_rules_depend_on_the_target() -> None:
    s = copy.deepcopy(SLICE)
    s["spec"]["sharedCounters"] = [{"name": "cs", "counters": {"mem": {"value": "1"}}}]
    assert check(s, "1.34").valid
    assert "only one of devices and sharedCounters" in messages(s, "1.37")[0][1]
    s = copy.deepcopy(SLICE)
    s["spec"]["devices"] = [{"name": f"d{i}"} for i in range(129)]
    assert ("spec.devices", "too many devices: 129, the limit is 128") in messages(s)
    s["spec"]["devices"] = [
        {"name": f"d{i}", "taints": [{"key": "k", "effect": "NoSchedule"}]} for i in range(65)
    ]
    assert any("the limit is 64" in m for _, m in messages(s))
    s = copy.deepcopy(SLICE)
    s["spec"]["devices"][0]["attributes"] = {f"a{i}": {"int": i} for i in range(33)}
    s["spec"]["devices"][0]["attributes"]["driverVersion"] = {"version": "535.129.03"}
    msgs = [m for _, m in messages(s)]
    assert "too many attributes and capacities: 35, the limit is 32" in msgs
    assert any("not a semantic version" in m for m in msgs)
    s = copy.deepcopy(SLICE)
    s["spec"]["pool"]["resourceSliceCount"] = 0
    s["spec"]["allNodes"] = True
    msgs = [m for _, m in messages(s)]
    assert "must be greater than zero, got 0" in msgs
    assert any("exactly one of nodeName" in m for m in msgs)


def test_taint_effect_none_needs_135() -> None:
    rule: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "r"},
        "spec": {"taint": {"key": "k", "effect": "None"}},
    }
    assert check(rule).valid
    rule["spec"]["taint"]["effect"] = "Evict"
    assert messages(rule) == [
        ("spec.taint.effect", "must be one of None, NoSchedule, NoExecute, got 'Evict'")
    ]


def test_device_class_extended_resource_name() -> None:
    dc: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "c"},
        "spec": {"extendedResourceName": "gpu"},
    }
    assert any("extended resource name" in m for _, m in messages(dc))
    dc["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    assert check(dc).valid
    assert any("alpha and off" in w.message for w in check(dc, "1.35").warnings)


@pytest.mark.parametrize("target", ["1.37", "1.38"])
def test_derived_attributes_are_dropped_while_their_gate_is_off(target: str) -> None:
    # pkg/api/resourceclaimspec/util.go dropDisabledDRADerivedAttributesFields; DRADerivedAttributes alpha, off
    derived = [{"name": "example.com/numa", "expression": "device.attributes['example.com'].numa"}]
    obj = rct_with(
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "derivedAttributes": derived}}
    )
    hit = [(w.path, w.message) for w in check(obj, target).warnings if "DRADerivedAttributes" in w.message]
    assert len(hit) == 1, hit
    assert hit[0][0] == "spec.spec.devices.requests[0].exactly.derivedAttributes"
    assert f"alpha and off by default in {target}: the apiserver drops derivedAttributes" in hit[0][1]
    sub = {
        "name": "gpu",
        "firstAvailable": [{"name": "a", "deviceClassName": "gpu.example.com", "derivedAttributes": derived}],
    }
    assert any("DRADerivedAttributes" in w.message for w in check(rct_with(sub), target).warnings)
    plain = rct_with({"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}})
    assert not any("DRADerivedAttributes" in w.message for w in check(plain, target).warnings)


def test_derived_attributes_do_not_exist_before_1_37() -> None:
    derived = [{"name": "example.com/numa", "expression": "1"}]
    obj = rct_with(
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "derivedAttributes": derived}}
    )
    result = check(obj, "1.36")
    assert (
        "spec.spec.devices.requests[0].exactly.derivedAttributes",
        "unknown field 'derivedAttributes'",
    ) in [(e.path, e.message) for e in result.errors]
    assert not any("DRADerivedAttributes" in w.message for w in result.warnings)


POD = textwrap.dedent(
    """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p, namespace: ns}
    spec:
      schedulingGroup: {podGroupName: g}
      resourceClaims:
      - {name: gpu, resourceClaimTemplateName: t}
      containers:
      - name: c
        image: x
        resources:
          limits: {nvidia.com/gpu: "1.5", memory: lots}
          claims:
          - {name: gpu, request: nope}
          - {name: other}
    """
)


def test_pod_rules_and_references() -> None:
    result = check(POD + "---\n" + RCT.replace("  name: t\n", "  name: t\n  namespace: ns\n"))
    msgs = [(e.line, e.message) for e in result.errors]
    assert (12, "extended resource nvidia.com/gpu must be a whole number") in msgs
    assert any(line == 12 and "invalid quantity 'lots'" in m for line, m in msgs)
    assert (14, "request 'nope' is not a request of claim 'gpu'") in msgs
    assert (15, "'other' does not name an entry of spec.resourceClaims") in msgs
    assert [w.message for w in result.warnings] == ["PodGroup 'g' is not among the inputs; it must exist"]


def test_missing_references_are_warnings_unless_strict() -> None:
    pod = (
        POD.replace('"1.5"', "1")
        .replace("memory: lots", "memory: 1Gi")
        .replace("request: nope", "request: gpu")
    )
    pod = pod.replace("      - {name: other}\n", "")
    result = check(pod)
    assert result.valid
    assert len(result.warnings) == 2
    strict = check(pod, strict_refs=True)
    assert not strict.valid
    assert len(strict.errors) == 2
    assert not check(RCT.replace("gpu.nvidia.com", "mystery.example.com"), strict_refs=True).valid


def test_crd_pod_templates_are_schema_checked() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: j}
        spec:
          pytorchReplicaSpecs:
            Worker:
              replicas: 2
              template:
                spec:
                  containers:
                  - name: c
                    image: x
                    resourcez: {}
        """
    )
    result = check(text)
    # against the PyTorchJob CRD's own schema (bundled: kubedra/data/crds), as the apiserver checks it
    assert [(e.line, e.message) for e in result.errors] == [
        (
            13,
            'unknown field "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resourcez" '
            "(not in the CRD of github.com/kubeflow/trainer@v1.9.4)",
        )
    ]
    assert result.to_dict()["notSchemaChecked"] == []


def test_cli_json_shape_and_exit_codes(tmp_path: Any) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(RCT.replace("name: gpu", "name: GPU"))
    good = tmp_path / "good.yaml"
    good.write_text(RCT)
    runner = CliRunner()
    res = runner.invoke(cli, ["validate", str(bad), "-o", "json"])
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert data["valid"] is False
    assert data["errors"] == [
        {
            "source": {"file": str(bad), "line": 9},
            "object": {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "namespace": None,
                "name": "t",
            },
            "path": "spec.spec.devices.requests[0].name",
            "message": "'GPU' is not a DNS label (lower-case alphanumerics and '-', starting and ending alphanumeric)",
        }
    ]
    assert runner.invoke(cli, ["validate", str(good)]).exit_code == 0
    from kubedra.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["validate", str(tmp_path / "missing.yaml")])
    assert exc.value.code == 2


def test_counter_only_slice_still_needs_node_selection() -> None:
    s = copy.deepcopy(SLICE)
    del s["spec"]["devices"]
    del s["spec"]["nodeName"]
    s["spec"]["sharedCounters"] = [{"name": "cs", "counters": {"mem": {"value": "1"}}}]
    assert messages(s) == [
        ("spec", "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection is required")
    ]


def test_server_populated_metadata() -> None:
    s = copy.deepcopy(SLICE)
    s["metadata"].update(uid="d13fd8bd-0a71-43e1-ba79-ebd2fae4847a", resourceVersion="530")
    result = check(s)
    assert [(e.path, e.message.split(";")[0]) for e in result.errors] == [
        ("metadata.uid", "metadata.uid is set by the server")
    ]
    assert [w.message for w in result.warnings] == [
        "server-populated metadata (resourceVersion); remove it before applying"
    ]


def test_cel_cost_limit() -> None:
    attrs = "device.attributes['gpu.nvidia.com']"
    expr = f"{attrs}.all(a, {attrs}.all(b, {attrs}.all(c, {attrs}.all(d, a == b))))"
    dc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "c"},
        "spec": {"selectors": [{"cel": {"expression": expr}}]},
    }
    assert messages(dc) == [("spec.selectors[0].cel.expression", "CEL: too complex, exceeds cost limit")]


HELM = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  {{- if .Values.x }}\n  replicas: 2\n  {{- end }}\n"


def test_every_file_is_reported_and_parse_errors_do_not_stop_the_rest(tmp_path: Any) -> None:
    """Each parse error with file:line, the other files still validated; an error found is exit 1
    even when files were not read, and without one incomplete is exit 2."""
    (tmp_path / "a-broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
    (tmp_path / "b-chart.yaml").write_text(HELM)
    (tmp_path / "c-bad.yaml").write_text(RCT.replace("name: gpu", "name: GPU"))
    (tmp_path / "d-good.yaml").write_text(RCT)
    res = CliRunner().invoke(cli, ["validate", str(tmp_path), "-o", "json"])
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert data["valid"] is False
    assert data["complete"] is False
    assert data["objects"] == 2
    unreadable = {
        (Path(u["source"]["file"]).name, u["source"]["line"]): u["message"] for u in data["unreadable"]
    }
    assert set(unreadable) == {("a-broken.yaml", 4), ("b-chart.yaml", 4)}
    assert unreadable["b-chart.yaml", 4].startswith("a Helm template: render it first with `helm template`")
    assert "invalid YAML" in unreadable["a-broken.yaml", 4]
    assert [Path(e["source"]["file"]).name for e in data["errors"]] == ["c-bad.yaml"]


def test_yaml_with_braces_in_strings_is_not_a_template() -> None:
    text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  t: "{{ .Values.x }}"\n'
    assert check(text).valid


def test_v1beta1_dra_is_one_story_in_audit_and_validate() -> None:
    """Served or not at the target, on by default or not, removed when: the same words in both verbs."""
    from kubedra.audit import engine
    from kubedra.audit.deprecations import DeprecationDB
    from kubedra.audit.model import Item, RuleBook
    from kubedra.audit.scope import Scope
    from kubedra.k8s.versions import Version

    text = RCT.replace("resource.k8s.io/v1", "resource.k8s.io/v1beta1").replace(
        "        exactly:\n          deviceClassName", "        deviceClassName"
    )
    (warning,) = check(text).warnings
    scope = Scope(name=None)
    scope.items = [Item(obj=yaml.safe_load(text))]
    findings, _ = engine.run(
        [scope], target=Version.parse("1.37"), current=None, db=DeprecationDB.load(), rules=RuleBook.load()
    )
    (deprecated,) = [f for f in findings if f.rule == "api.deprecated"]
    story = (
        "resource.k8s.io/v1beta1 ResourceClaimTemplate: served at 1.37 only when enabled "
        "(--runtime-config=resource.k8s.io/v1beta1=true; off by default), deprecated since 1.35, "
        "removal planned for 1.38"
    )
    assert warning.message.startswith(story)
    assert deprecated.message == story


def test_what_the_apiserver_refuses_beyond_the_schema() -> None:
    """Found on the real-world corpus by a server dry-run (tests/integration/test_realworld_dryrun.py)."""
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: FILLED BY THE OPERATOR}\nspec:\n"
        "  template:\n    spec:\n      serviceAccountName: $SA\n      containers: [{name: c}]\n"
    )
    paths = sorted(str(path) for path, _ in messages(job))
    assert paths == [
        "metadata.namespace",
        "spec.template.spec.containers[0].image",
        "spec.template.spec.restartPolicy",
        "spec.template.spec.serviceAccountName",
    ]
    ok = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      serviceAccountName: sa\n      containers: [{name: c, image: x}]\n"
    )
    assert messages(ok) == []


@pytest.mark.parametrize("target", ["1.34", "1.35", "1.36", "1.37"])
def test_an_extended_resource_requested_without_a_limit_is_refused_at_every_version(target: str) -> None:
    # kube-apiserver ValidateResourceRequirements: "Limit must be set for non overcommitable resources" at every
    # supported minor (the testbed's real 1.37 apiserver refuses it: tests/integration/test_validate_dryrun.py);
    # kubedra said "valid" at 1.36 and 1.37
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n"
        "  - name: c\n    image: x\n    resources:\n      requests: {nvidia.com/gpu: 1}\n"
    )
    result = validate_texts([("p.yaml", text)], target)
    assert not result.valid
    assert [e.message for e in result.errors] == ["extended resource nvidia.com/gpu: limits must be set"]
    limits_only = text.replace("requests:", "limits:")
    assert validate_texts([("p.yaml", limits_only)], target).valid


def test_a_custom_resource_with_no_schema_is_not_valid_with_exit_0(tmp_path: Path, monkeypatch: Any) -> None:
    """The training-operator v1.8.1's MXJob example (tests/realworld/inputs, a custom resource whose CRD kubedra
    does not bundle): kubedra said 'valid' with exit 0 while only its metadata was checked; now stderr names the
    kind, exit 2, unless --ignore-missing-schemas accepts it or --server-dry-run had the apiserver check it
    against its CRD. A Volcano Job (bundled CRD) is checked offline: valid, and a typo in its spec is exit 1."""
    from kubedra.testing.cli import run

    inputs = Path(__file__).parents[2] / "realworld" / "inputs"
    job = inputs / "legacy--training-operator-v1.8.1-mxjob-dist-gpu.yaml"
    res = run("validate", str(job))
    assert res.exit_code == 2, res.output
    assert "1 object at 1.37: INCOMPLETE, 0 errors, 0 warnings, 1 object not schema-checked\n" in res.stderr
    assert (
        "kubedra: incomplete: 1 object of kubeflow.org/v1 MXJob not schema-checked (no schema: a custom "
        "resource; --server-dry-run checks it against its CRD, --ignore-missing-schemas accepts it)\n"
    ) in res.stderr
    res = run("validate", str(job), "-o", "json")
    assert res.exit_code == 2
    assert json.loads(res.stdout)["notSchemaChecked"] == ["kubeflow.org/v1 MXJob"]
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(job.read_text().replace("jobMode:", "jobMoed:", 1))
    assert "jobMoed" in wrong.read_text()
    assert run("validate", str(wrong)).exit_code == 2  # not "valid": kubedra cannot see the typo
    res = run("validate", str(job), "--ignore-missing-schemas")
    assert res.exit_code == 0
    assert "kubedra: accepted: 1 object of kubeflow.org/v1 MXJob" in res.stderr
    assert "valid, 0 errors, 0 warnings, 1 object not schema-checked (accepted)\n" in res.stderr

    volcano = inputs / "volcano--job.yaml"
    res = run("validate", str(volcano))
    assert res.exit_code == 0, res.output
    assert "not schema-checked" not in res.stderr, res.output
    typo = tmp_path / "typo.yaml"
    typo.write_text(volcano.read_text().replace("minAvailable:", "minAvailabel:", 1))
    res = run("validate", str(typo))
    assert res.exit_code == 1, res.output
    assert 'unknown field "spec.minAvailabel"' in res.stdout, res.output

    import kubedra.validate.dryrun as dryrun

    monkeypatch.setattr(dryrun, "dry_run", lambda docs, **_: [])  # the apiserver accepted every object
    res = run("validate", str(job), "--server-dry-run")
    assert res.exit_code == 0, res.output
    assert "not schema-checked" not in res.stderr, res.output


def test_incomplete_is_never_valid_and_errors_win_the_exit_code(tmp_path: Path) -> None:
    """a folder with a custom resource kubedra cannot check (the MXJob of tests/realworld/inputs)
    printed "valid" and JSON "valid": true, then exit 2; with 20 real errors beside it, still exit 2, so the
    errors hid behind "input error". Now valid is false whenever something was not checked, and an error
    found is exit 1; exit 2 only when nothing wrong was found but something was not read or checked."""
    from kubedra.testing.cli import run

    job = (
        Path(__file__).parents[2]
        / "realworld"
        / "inputs"
        / "legacy--training-operator-v1.8.1-mxjob-dist-gpu.yaml"
    )
    (tmp_path / "mxjob.yaml").write_text(job.read_text())
    res = run("validate", str(tmp_path), "-o", "json")
    data = json.loads(res.stdout)
    assert (res.exit_code, data["valid"], data["complete"]) == (2, False, False), res.output
    res = run("validate", str(tmp_path))
    assert res.exit_code == 2, res.stderr
    assert ": valid" not in res.stderr, res.stderr
    assert "INCOMPLETE" in res.stderr, res.stderr

    (tmp_path / "bad.yaml").write_text(
        "\n---\n".join(RCT.replace("name: gpu", f"name: GPU{i}") for i in range(20))
    )
    res = run("validate", str(tmp_path), "-o", "json")
    data = json.loads(res.stdout)
    assert (res.exit_code, data["valid"], len(data["errors"])) == (1, False, 20), res.output
    assert data["notSchemaChecked"] == ["kubeflow.org/v1 MXJob"]
    res = run("validate", str(tmp_path))
    assert res.exit_code == 1, res.stderr
    assert "INVALID, 20 errors" in res.stderr, res.stderr
    assert "kubedra: incomplete: 1 object of kubeflow.org/v1 MXJob not schema-checked" in res.stderr


def test_a_cel_environment_that_cannot_be_built_is_not_valid(monkeypatch: Any, tmp_path: Path) -> None:
    """When the CEL environment could not be built, validate skipped compiling every selector, said 'valid'
    with a warning and exit 0; now it is what it is, an internal error (exit 3, one line)."""
    import kubedra.validate.engine as engine
    from kubedra.testing.cli import run

    def broken(**_: Any) -> Any:
        raise RuntimeError("no CEL runtime")

    monkeypatch.setattr(engine, "SelectorEnvironment", broken)
    engine._cel_environment.cache_clear()
    f = tmp_path / "class.yaml"
    f.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\n"
        "spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"gpu.nvidia.com\" &&'}\n"
    )
    try:
        res = run("validate", str(f))
    finally:
        engine._cel_environment.cache_clear()
    assert res.exit_code == 3, res.output
    assert res.stdout == "", res.output
    assert res.stderr.count("\n") == 1
    assert "no CEL runtime" in res.stderr


@pytest.mark.parametrize(
    ("api", "kind", "error"),
    [
        ("v1", {"a": "Pod"}, ("kind", "kind is a mapping, not a string")),
        ("v1", ["Pod"], ("kind", "kind is a list, not a string")),
        (1, "Pod", ("apiVersion", "apiVersion is a number, not a string")),
        (
            "v1\x00",
            "Pod",
            ("apiVersion", "v1\x00 Pod: no Kubernetes release serves this version; use v1 Pod"),
        ),
        ("v1", "Pod\x00", ("apiVersion", "v1 Pod\x00 is not served by Kubernetes 1.37")),
        ("v1", "../../../../../x", ("apiVersion", "v1 ../../../../../x is not served by Kubernetes 1.37")),
        ("v1", "P" * 300, ("apiVersion", f"v1 {'P' * 300} is not served by Kubernetes 1.37")),
    ],
    ids=["kind-mapping", "kind-list", "api-number", "api-nul", "kind-nul", "kind-path", "kind-long"],
)
def test_apiversion_and_kind_that_name_no_schema_are_errors(
    api: Any, kind: Any, error: tuple[str, str]
) -> None:
    """Found by the mutation fuzz: a kind or apiVersion that is a mapping, holds a NUL or is longer than a
    file name was looked up as a schema file name (OSError, ValueError: exit 3). A Kind and a version are
    names, never paths: anything else has no schema; a value that is not a string is no kind at all (kubectl's
    unstructured decoding reads it as missing)."""
    obj = {"apiVersion": api, "kind": kind, "metadata": {"name": "p"}}
    assert messages(json.dumps(obj)) == [error]


def test_pod_claim_names_that_are_not_strings_are_errors() -> None:
    """Found by the mutation fuzz: a pod's resourceClaims[].name or a container's resources.claims[].name that is
    a mapping or list was looked up in a set (TypeError: unhashable, exit 3 in validate and migrate)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "resourceClaims": [
                {"name": {"value": "gpu"}, "resourceClaimName": "c"},
                {"name": "gpu", "resourceClaimName": "c"},
            ],
            "containers": [
                {"name": "c", "image": "i", "resources": {"claims": [{"name": ["gpu"]}, {"name": "gpu"}]}}
            ],
        },
    }
    assert messages(pod) == [
        ("spec.resourceClaims[0].name", "expected string, got object {'value': 'gpu'}"),
        ("spec.resourceClaims[0].name", "must be a non-empty DNS label"),
        ("spec.containers[0].resources.claims[0].name", "expected string, got array ['gpu']"),
        (
            "spec.containers[0].resources.claims[0].name",
            "['gpu'] does not name an entry of spec.resourceClaims",
        ),
    ]


def test_lists_that_are_scalars_are_schema_errors_not_crashes() -> None:
    """Found by the mutation fuzz: a claim's devices.requests that is ``true`` (read for the pods' references)
    and a pod's containers that is ``1.5`` (read for images) were iterated (TypeError, exit 3 in validate and
    migrate); each is now the schema's type error."""
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": True}},
    }
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": 1.5}}
    text = json.dumps(claim) + "\n---\n" + json.dumps(pod)
    found = messages(text)
    assert ("spec.devices.requests", "expected array, got boolean True") in found, found
    assert ("spec.containers", "expected array, got number 1.5") in found, found


@pytest.mark.parametrize("target", ["1.37", "1.38"])
def test_custom_resource_definitions_are_served(target: str) -> None:
    # k8s.io/apiextensions-api v0.38.0-beta.0 holds the apiextensions.k8s.io types that apiextensions-apiserver held
    # before: the lifecycle data reads both (scripts/gen_deprecations.py), so 1.38 still serves v1
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
    }
    assert not [e.message for e in check(crd, target).errors if "not served" in e.message]
