"""Custom resources against their CRD's structural schema, offline (kubedra.validate.crdschema): one test per
schema feature, on small schemas written here and on the bundled CRDs (kubedra/data/crds). The same verdicts
are compared with a real kube-apiserver that has the bundled CRDs installed in
tests/integration/test_validate_crds.py."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.k8s import datafiles
from kubedra.validate import crdschema
from kubedra.validate.engine import validate_texts

REALWORLD = Path(__file__).parents[2] / "realworld" / "inputs"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "format": "int32", "minimum": 1},
                "mode": {"type": "string", "enum": ["Fast", "Slow"], "default": "Fast"},
                "port": {
                    "x-kubernetes-int-or-string": True,
                    "anyOf": [{"type": "integer"}, {"type": "string"}],
                },
                "name": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
                "opaque": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "maybe": {"type": "string", "nullable": True},
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    },
                },
                "inner": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "typed": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                },
                "ruled": {
                    "type": "object",
                    "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
                    "x-kubernetes-validations": [
                        {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                        {"rule": "self == oldSelf", "message": "immutable"},
                    ],
                },
            },
        },
    },
}


def check(spec: dict[str, Any], **kw: Any) -> list[tuple[str, str, bool]]:
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}
    return [
        (".".join(map(str, i.path)), i.message, i.warning)
        for i in crdschema.check(obj, SCHEMA, source="x@v1", **kw)
    ]


def test_a_valid_object_has_no_issues() -> None:
    assert (
        check({"size": 3, "port": "http", "tags": ["a", "b"], "ports": [{"name": "a"}, {"name": "b"}]}) == []
    )


def test_unknown_fields_are_errors_as_kubectl_strict_validation_reports_them() -> None:
    assert check({"size": 1, "sise": 2}) == [
        ("spec.sise", 'unknown field "spec.sise" (not in the CRD of x@v1)', False)
    ]
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t", "labelz": {}},
        "extra": 1,
        "spec": {"size": 1},
    }
    assert [i.message for i in crdschema.check(obj, SCHEMA)] == [
        'unknown field "metadata.labelz"',
        'unknown field "extra"',
    ]
    assert check({"size": 1, "ports": [{"name": "a", "nmae": "b"}]})[0][1].startswith(
        'unknown field "spec.ports[0].nmae"'
    )


def test_preserve_unknown_fields_and_additional_properties_keep_fields() -> None:
    assert check({"size": 1, "opaque": {"anything": {"at": ["all"]}}, "labels": {"a": "b"}}) == []
    assert check({"size": 1, "labels": {"a": 1}}) == [
        ("spec.labels.a", "Invalid value: 1: spec.labels.a in body must be of type string: 1", False)
    ]


def test_types_int_or_string_and_int32() -> None:
    assert check({"size": "3"}) == [
        ("spec.size", 'Invalid value: "3": spec.size in body must be of type integer: "3"', False)
    ]
    assert check({"size": True})[0][1].endswith("must be of type integer: true")
    assert check({"size": 2**31})[0][1] == f"Invalid value: {2**31}: spec.size in body must be of type int32"
    assert check({"size": 1, "port": 8080}) == check({"size": 1, "port": "http"}) == []
    assert check({"size": 1, "port": [1]}) == [
        (
            "spec.port",
            'Invalid value: "array": spec.port in body must be of type integer,string: "array"',
            False,
        )
    ]


def test_required_enum_bounds_lengths_and_patterns() -> None:
    assert check({}) == [("spec.size", "spec.size: Required value", False)]
    assert (
        check({"size": 0})[0][1] == "Invalid value: 0: spec.size in body should be greater than or equal to 1"
    )
    assert check({"size": 1, "mode": "Medium"}) == [
        ("spec.mode", 'Unsupported value: "Medium": supported values: "Fast", "Slow"', False)
    ]
    assert [m for _p, m, _w in check({"size": 1, "name": "ABCDEF"})] == [
        "Too long: spec.name may not be more than 5 bytes",
        "Invalid value: \"ABCDEF\": spec.name in body should match '^[a-z]+$'",
    ]


def test_nulls_and_defaults_as_the_apiserver_prunes_and_defaults() -> None:
    assert check({"size": 1, "maybe": None}) == []  # nullable
    assert check({"size": 1, "name": None}) == []  # not nullable: pruned, as if absent
    assert check({"size": None}) == [("spec.size", "spec.size: Required value", False)]
    # the default (Fast) is applied before validation: an absent mode is valid, a null one too
    assert check({"size": 1, "mode": None}) == []


def test_list_type_set_and_map_are_unique() -> None:
    assert check({"size": 1, "tags": ["a", "a"]}) == [("spec.tags.1", 'Duplicate value: "a"', False)]
    assert check({"size": 1, "ports": [{"name": "a"}, {"name": "a"}]}) == [
        ("spec.ports.1", 'Duplicate value: ["a"]', False)
    ]


def test_embedded_resources_carry_apiversion_kind_and_metadata() -> None:
    inner = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"a": "b"}},
        "data": {},
    }
    assert check({"size": 1, "inner": inner}) == []
    assert check({"size": 1, "inner": {**inner, "metadata": {"nmae": "c"}}}) == [
        (
            "spec.inner.metadata.nmae",
            'unknown field "spec.inner.metadata.nmae" (not in the CRD of x@v1)',
            False,
        )
    ]
    assert check({"size": 1, "inner": {"data": {}}}) == [
        ("spec.inner.apiVersion", "spec.inner.apiVersion: Required value: must not be empty", False),
        ("spec.inner.kind", "spec.inner.kind: Required value: must not be empty", False),
    ]
    typed = {"apiVersion": "v1", "kind": "X", "metadata": {"name": "x"}, "spec": {"x": 1, "y": 2}}
    assert check({"size": 1, "typed": typed}) == [
        ("spec.typed.spec.y", 'unknown field "spec.typed.spec.y" (not in the CRD of x@v1)', False)
    ]


def test_cel_rules_are_evaluated_and_transition_rules_skipped_on_create() -> None:
    assert check({"size": 1, "ruled": {"min": 1, "max": 2}}) == []
    assert check({"size": 1, "ruled": {"min": 3, "max": 2}}) == [
        ("spec.ruled", 'Invalid value: "object": min must not exceed max', False)
    ]
    # a missing key is an evaluation error, as the apiserver's
    (issue,) = check({"size": 1, "ruled": {"min": 3}})
    assert issue[0] == "spec.ruled"
    assert "evaluation error" in issue[1]
    assert not issue[2]


def test_a_cel_rule_kubedra_cannot_compile_is_a_warning_never_a_silent_pass() -> None:
    schema = json.loads(json.dumps(SCHEMA))
    schema["properties"]["spec"]["x-kubernetes-validations"] = [{"rule": "self.size >", "message": "m"}]
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"size": 1}}
    (issue,) = crdschema.check(obj, schema)
    assert issue.warning
    assert issue.message.startswith("1 x-kubernetes-validations (CEL) rule of the Thing CRD not checked")


def test_every_bundled_crd_names_its_source_and_licence_and_stays_small() -> None:
    pins = yaml.safe_load((Path(__file__).parents[3] / "scripts" / "crd-sources.yaml").read_text())
    names = [n for n in datafiles.names("crds") if n.endswith(".json")]
    assert len(names) == 29
    total = 0
    for name in names:
        data = json.loads(datafiles.read_text(f"crds/{name}"))
        src = data["source"]
        assert src["repository"].startswith("github.com/")
        assert "@v" in src["repository"]
        assert src["path"].endswith(".yaml")
        assert src["operator"] in pins
        pinned = pins[src["operator"]]  # the file is regenerated whenever its pin moves
        assert src["repository"] == f"github.com/{pinned['repository']}@{pinned['tag']}", name
        assert src["path"] in pinned["paths"], name
        assert src["licence"] == "Apache-2.0"
        # the keyword's text is stripped (a property named description, WorkloadPriorityClass's, stays)
        assert '"description": "' not in json.dumps(data["versions"])
        size = len(datafiles.read_text(f"crds/{name}"))
        # KServe's InferenceService is the largest: predictor, transformer and explainer pod specs
        assert size < 80_000, name
        total += size
    assert total < 900_000
    kinds = {(g, k) for (g, k) in crdschema.bundled()}
    assert {("jobset.x-k8s.io", "JobSet"), ("batch.volcano.sh", "Job"), ("ray.io", "RayJob")} <= kinds


def _cr(text: str) -> Any:
    return validate_texts([("cr.yaml", textwrap.dedent(text))])


def test_bundled_kinds_validate_offline_unserved_versions_name_the_served_ones() -> None:
    result = _cr(
        """\
        apiVersion: jobset.x-k8s.io/v1
        kind: JobSet
        metadata: {name: js}
        spec: {}
        """
    )
    assert [(e.path, e.message) for e in result.errors] == [
        (
            "apiVersion",
            "jobset.x-k8s.io/v1 JobSet is not served by its CRD (github.com/kubernetes-sigs/jobset@v0.12.0): "
            "served: jobset.x-k8s.io/v1alpha2",
        )
    ]
    assert result.not_schema_checked == []
    # MPIJob: each operator's CRD serves its own version
    mpi = """\
        apiVersion: kubeflow.org/VERSION
        kind: MPIJob
        metadata: {name: m}
        spec: {FIELD: {}}
        """
    v1 = _cr(mpi.replace("VERSION", "v1").replace("FIELD", "mpiReplicaSpecs"))
    v2 = _cr(mpi.replace("VERSION", "v2beta1").replace("FIELD", "mpiReplicaSpecs"))
    assert v1.valid, (v1.errors, v2.errors)
    assert v2.valid, (v1.errors, v2.errors)
    v3 = _cr(mpi.replace("VERSION", "v3").replace("FIELD", "mpiReplicaSpecs"))
    assert "served: kubeflow.org/v1, kubeflow.org/v2beta1" in v3.errors[0].message


@pytest.mark.parametrize(
    ("name", "old", "new", "path"),
    [
        ("volcano--job.yaml", "minAvailable:", "minAvailabel:", "spec.minAvailabel"),
        (
            "jobset--paralleljobs.yaml",
            "parallelism:",
            "parallelizm:",
            "spec.replicatedJobs[0].template.spec.parallelizm",
        ),
        ("lws--sample.yaml", "size:", "sise:", "spec.leaderWorkerTemplate.sise"),
    ],
)
def test_a_typo_in_a_real_custom_resource_is_found_at_its_line(
    name: str, old: str, new: str, path: str
) -> None:
    text = (REALWORLD / name).read_text()
    assert validate_texts([(name, text)]).valid
    bad = validate_texts([(name, text.replace(old, new, 1))])
    (err,) = bad.errors
    line = next(i for i, t in enumerate(text.replace(old, new, 1).splitlines(), 1) if new in t)
    assert (err.path, err.line) == (path, line)
    assert err.message.startswith(f'unknown field "{path}"')


def _patterns(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        return own + [p for v in node.values() for p in _patterns(v)]
    if isinstance(node, list):
        return [p for v in node for p in _patterns(v)]
    return []


def test_bundled_patterns_compile_as_go_regexp_and_match_in_linear_time() -> None:
    # kube-openapi compiles a schema's pattern with Go's regexp (RE2): every bundled one must compile there, so
    # none is skipped, and a value crafted to make a backtracking engine explode is matched at once
    folder = Path(crdschema.__file__).resolve().parents[1] / "data" / "crds"
    patterns = {p for f in folder.glob("*.json") for p in _patterns(json.loads(f.read_text()))}
    assert patterns
    assert all(crdschema._pattern(p) is not None for p in patterns)
    evil = crdschema._pattern("^(a+)+$")
    assert evil is not None
    assert evil.search("a" * 5000 + "!") is None


REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "inputs"


@pytest.mark.parametrize(
    ("name", "crd"),
    [
        # Trainer v2.2+ declares mlPolicy.flux and the runtime's volumeClaimPolicies (v2.1.0 did not: INVALID)
        ("trainer--flux-runtime.yaml", "github.com/kubeflow/trainer@v2.3.0"),
        ("trainer--torchtune-llama3.2-1b-runtime.yaml", "github.com/kubeflow/trainer@v2.3.0"),
        # Kueue's queues are checked against Kueue's CRD (they were not schema-checked: exit 2)
        ("kueue--tas-sample-gpu-queues.yaml", "github.com/kubernetes-sigs/kueue@v0.19.2"),
    ],
)
def test_current_operator_releases_accept_their_real_manifests_and_validate_names_the_crd(
    name: str, crd: str
) -> None:
    from kubedra.testing.cli import run

    result = run("validate", str(REALWORLD / name), code=0)
    assert f"checked against the CRD of {crd} " in result.stderr
