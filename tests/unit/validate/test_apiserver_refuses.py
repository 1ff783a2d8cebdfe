"""kubedra validate refuses what the apiserver (or kubectl's strict decoding) refuses: duplicate mapping keys,
object names, replica counts, negative resource quantities, ValidatingAdmissionPolicy CEL that does not compile,
oversized ConfigMaps; and an input with no manifest is exit 2, not "valid"."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kubedra.testing.cli import run


def _run(tmp_path: Path, text: str, *extra: str) -> tuple[int, dict[str, object] | None, str]:
    f = tmp_path / "in.yaml"
    f.write_text(textwrap.dedent(text))
    res = run("validate", str(f), "-o", "json", *extra)
    out = json.loads(res.stdout) if res.stdout.strip() else None
    return res.exit_code, out, res.stderr


def _errors(tmp_path: Path, text: str) -> list[tuple[int | None, str, str]]:
    code, out, _ = _run(tmp_path, text)
    assert out is not None
    errors = out["errors"]
    assert isinstance(errors, list)
    assert code == (1 if errors else 0)
    return [(e["source"]["line"], e["path"], e["message"]) for e in errors]


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{a: b}}}}
  template:
    metadata: {{labels: {{a: b}}}}
    spec:
      containers:
      - name: c
        image: x
        resources:
          limits:
            nvidia.com/gpu: {gpu}
"""


def test_duplicate_mapping_keys_are_errors_at_the_second_line(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        """\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: a
          labels: {x: "1"}
          name: b
        data:
          k: v
          k: w
        """,
    )
    assert (6, "", 'mapping key "name" already defined at line 4') in errors
    assert (9, "", 'mapping key "k" already defined at line 8') in errors


def test_duplicate_keys_are_found_through_aliases_once(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        """\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: a}
        data: &d
          k: v
          k: w
        binaryData: *d
        """,
    )
    assert errors == [(6, "", 'mapping key "k" already defined at line 5')]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a" * 254, "must be no more than 253 characters"),
        ("Bad_Name", "is not a DNS subdomain"),
        ('""', "metadata.name is required"),
    ],
)
def test_object_names(tmp_path: Path, name: str, expected: str) -> None:
    errors = _errors(tmp_path, f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n")
    assert len(errors) == 1
    assert expected in errors[0][2]
    assert errors[0][0] in (3, 4)


def test_missing_name_and_kind_specific_formats(tmp_path: Path) -> None:
    assert "metadata.name is required" in _errors(tmp_path, "apiVersion: v1\nkind: ConfigMap\n")[0][2]
    generate = "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n"
    assert _errors(tmp_path, generate) == []
    assert _errors(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a.b-c}\n") == []
    # a Namespace is a DNS label (no dots), a Service a DNS-1035 label, an RBAC role a path segment
    assert "DNS label" in _errors(tmp_path, "apiVersion: v1\nkind: Namespace\nmetadata: {name: a.b}\n")[0][2]
    svc = "apiVersion: v1\nkind: Service\nmetadata: {name: 1abc}\nspec: {ports: [{port: 80}]}\n"
    assert "must start with a letter" in _errors(tmp_path, svc)[0][2]
    role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {}\n"
    assert _errors(tmp_path, role.format("system:Admin")) == []
    assert "may not contain '/'" in _errors(tmp_path, role.format("a/b"))[0][2]


@pytest.mark.parametrize(
    ("replicas", "expected"),
    [
        ("-5", "-5: must be greater than or equal to 0"),
        ("3000000000", "out of range for an int32"),
        ("1e18", "spec.replicas"),
        ("1.0e+18", "out of range for an int32"),
    ],
)
def test_replicas_are_a_non_negative_int32(tmp_path: Path, replicas: str, expected: str) -> None:
    errors = _errors(tmp_path, DEPLOYMENT.format(replicas=replicas, gpu=1))
    assert len(errors) == 1
    line, path, message = errors[0]
    assert (line, path) == (6, "spec.replicas")
    assert expected in f"{path} {message}"


def test_negative_resource_quantities(tmp_path: Path) -> None:
    errors = _errors(tmp_path, DEPLOYMENT.format(replicas=1, gpu=-1))
    assert errors == [
        (
            16,
            "spec.template.spec.containers[0].resources.limits.nvidia.com/gpu",
            "-1: must be greater than or equal to 0",
        )
    ]
    assert _errors(tmp_path, DEPLOYMENT.format(replicas=0, gpu=0)) == []


def test_validating_admission_policy_cel_must_compile(tmp_path: Path) -> None:
    policy = """\
    apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingAdmissionPolicy
    metadata:
      name: p
    spec:
      matchConstraints:
        resourceRules:
        - apiGroups: [""]
          apiVersions: [v1]
          operations: [CREATE]
          resources: [pods]
      validations:
      - expression: {expr}
        messageExpression: "'ok'"
    """
    errors = _errors(tmp_path, policy.format(expr="'object.spec.containers.all(c, '"))
    assert len(errors) == 1
    line, path, message = errors[0]
    assert (line, path) == (13, "spec.validations[0].expression")
    assert message.startswith("CEL: ")
    assert "Syntax error" in message
    assert "\n" not in message
    assert _errors(tmp_path, policy.format(expr="'object.spec.containers.all(c, c.image != \"\")'")) == []


def test_configmap_over_one_mib(tmp_path: Path) -> None:
    def cm(size: int) -> str:
        return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata:\n  k: {'a' * size}\n"

    assert _errors(tmp_path, cm(1024 * 1024 - 1)) == []  # the key counts: 1 + 1,048,575 bytes
    errors = _errors(tmp_path, cm(1024 * 1024))
    assert len(errors) == 1
    assert errors[0][0] == 4
    assert "1,048,577 bytes: too long, must have at most 1,048,576 bytes" in errors[0][2]


@pytest.mark.parametrize("text", ["", "---\n", "# only a comment\n---\n...\n"])
def test_no_manifest_is_exit_2(tmp_path: Path, text: str) -> None:
    code, out, err = _run(tmp_path, text)
    assert code == 2
    assert out is None
    assert err.strip().count("\n") == 0
    assert "no manifests found in" in err


def test_empty_folder_is_exit_2(tmp_path: Path) -> None:
    res = run("validate", str(tmp_path))
    assert res.exit_code == 2
    assert "no manifests found" in res.stderr
