"""kubedra validate's offline CRD schemas agree with a real 1.37 apiserver that has the same CRDs installed.

The bundled CRDs (``kubedra/data/crds``, the operators' released manifests) are installed into the testbed's
kube-apiserver; every real custom resource of a bundled kind in the real-world corpus, and mutated copies of some
(an unknown field, a wrong type, a missing required field, an unserved version, a bad enum value), are judged
offline and by a server-side dry-run: the same objects must be refused. Offline checks of pod-template contents
(an image is required...) that the apiserver leaves to the operator are not part of this comparison: only
schema findings are compared."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.realworld import outcomes

from kubedra.k8s.workloads import api_group
from kubedra.sources.files import Document, parse_text
from kubedra.testing.controlplane import ControlPlane
from kubedra.validate import crdschema
from kubedra.validate.dryrun import dry_run
from kubedra.validate.engine import validate_documents

pytestmark = pytest.mark.integration

# the MPI operator's MPIJob CRD (kubeflow.org/v2beta1) is installed; the training-operator's (v1) has the same name
SKIP_SOURCES = ("github.com/kubeflow/trainer@v1.9.4 manifests/base/crds/kubeflow.org_mpijobs.yaml",)


def _install(cp: ControlPlane) -> None:
    from kubedra.testing.fakecluster import create_ignore_exists
    from kubedra.testing.kubeapi import ApiError

    names = []
    for crds in crdschema.bundled().values():
        for crd in crds:
            if crd.source in SKIP_SOURCES:
                continue
            m = crdschema.manifest(crd)
            try:
                cp.api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", m)
            except ApiError as err:
                if err.status != 409:
                    raise
            names.append(m["metadata"]["name"])
    deadline = time.monotonic() + 60
    for name in names:
        while True:
            got = cp.api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
            conds = {c["type"]: c["status"] for c in (got.get("status") or {}).get("conditions") or []}
            if conds.get("Established") == "True":
                break
            assert time.monotonic() < deadline, (name, conds)
            time.sleep(0.2)
    for ns in sorted({"default", "kubedra-crds", *(d.namespace for d in _real() if d.namespace)}):
        create_ignore_exists(cp.api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


def _bundled(d: Document) -> bool:
    if d.api_version == "kubeflow.org/v1" and d.kind == "MPIJob":
        return False
    return crdschema.known(api_group(d.api_version), d.kind)


def _real() -> list[Document]:
    docs: list[Document] = []
    for p in outcomes.inputs():
        parsed = parse_text(p.read_text(), str(p))
        if not parsed.errors:
            docs.extend(d for d in parsed.documents if d.api_version and d.kind and _bundled(d))
    return docs


def _walk(
    obj: Any, schema: Any, defs: Any, path: tuple[Any, ...] = ()
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """(path, resolved schema) of every value present in ``obj``, depth first."""
    while isinstance(schema, dict) and "$def" in schema:
        schema = defs[schema["$def"]]
    out = [(path, schema)]
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        for k, v in obj.items():
            if k in props:
                out.extend(_walk(v, props[k], defs, (*path, k)))
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(obj):
            out.extend(_walk(v, schema["items"], defs, (*path, i)))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> None:
    for p in path[:-1]:
        obj = obj[p]
    if delete:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value


def _in_order_with_depends_on(o: dict[str, Any]) -> None:
    o["spec"]["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    o["spec"]["replicatedJobs"][-1]["dependsOn"] = [
        {"name": o["spec"]["replicatedJobs"][0]["name"], "status": "Ready"}
    ]


# x-kubernetes-validations (CEL) rules each broken (and one kept by a generated name)
_CEL_MUTANTS: dict[str, tuple[Any, ...]] = {
    "JobSet": (_in_order_with_depends_on,),
    "RayJob": (lambda o: o["spec"].__setitem__("managedBy", "example.com/other"),),
    "TrainJob": (
        lambda o: o["metadata"].__setitem__("name", "a" * 64),  # rule: at most 63 characters
        lambda o: o["metadata"].__setitem__("name", "1abc"),  # rule: an RFC 1035 label
    ),
}
_CEL_KEPT: dict[str, Any] = {
    "TrainJob": lambda o: o.__setitem__("metadata", {"generateName": "gen-", "namespace": "kubedra-crds"}),
}


def _mutants(docs: list[Document]) -> list[Document]:
    """Per kind, one real object broken in several ways, each where its CRD's schema says: an unknown field in
    spec and deep in a pod template, an unserved version, spec of the wrong type, a wrong-typed integer and
    int-or-string, a value outside an enum, a required field removed."""
    out: list[Document] = []
    seen: set[tuple[str, str]] = set()
    for d in docs:
        key = (d.api_version, d.kind)
        if key in seen or not isinstance(d.obj.get("spec"), dict):
            continue
        seen.add(key)
        (crd,) = [
            c for c in crdschema.bundled()[(api_group(d.api_version), d.kind)] if c.source not in SKIP_SOURCES
        ]
        base = copy.deepcopy(d.obj)
        base["metadata"] = {"name": "mutant", "namespace": "kubedra-crds"}
        spots = _walk(base, crd.versions[d.api_version.rsplit("/", 1)[-1]], crd.defs)
        variants: list[dict[str, Any]] = []

        def variant(
            change: Any, base: dict[str, Any] = base, variants: list[dict[str, Any]] = variants
        ) -> None:
            obj = copy.deepcopy(base)
            change(obj)
            variants.append(obj)

        variant(lambda o: o["spec"].__setitem__("kubedraTypo", 1))
        unserved = api_group(d.api_version) + "/v9"
        variant(lambda o, v=unserved: o.__setitem__("apiVersion", v))
        variant(lambda o: o.__setitem__("spec", []))
        variant(lambda o: o["metadata"].__setitem__("labelz", {"a": "b"}))  # ObjectMeta has no such field
        deep = [
            p for p, s in spots if "containers" in p and s.get("type") == "object" and s.get("properties")
        ]
        if deep:
            variant(lambda o, p=deep[-1]: _set(o, (*p, "kubedraTypo"), "x"))
        ints = [p for p, s in spots if s.get("type") == "integer" and p]
        if ints:
            variant(lambda o, p=ints[0]: _set(o, p, "three"))
        ios = [p for p, s in spots if s.get("x-kubernetes-int-or-string") and p]
        if ios:
            variant(lambda o, p=ios[0]: _set(o, p, [1]))
        enums = [p for p, s in spots if s.get("enum") and p]
        if enums:
            variant(lambda o, p=enums[0]: _set(o, p, "KubedraBogus"))
        required = [(p, r) for p, s in spots for r in s.get("required") or [] if p and p[0] == "spec"]
        if required:
            variant(lambda o, pr=required[-1]: _set(o, (*pr[0], pr[1]), None, delete=True))
        for change in _CEL_MUTANTS.get(d.kind, ()):
            variant(change)
        for i, obj in enumerate(variants):
            out.extend(parse_text(yaml.safe_dump(obj), f"mutant-{d.kind}-{i}.yaml").documents)
    return out


def _schema_errors(offline: Any) -> set[tuple[str, str, str]]:
    # findings from the pod-template checks kubedra adds (image required, extended resources, references) are
    # not the apiserver's for a custom resource: compare what the CRD schema says
    return {
        (Path(e.file).name, e.kind, e.name)
        for e in offline.errors
        if e.message.startswith(
            ("unknown field", "Invalid value", "Unsupported value", "Required value", "Too ")
        )
        or ": Required value" in e.message
        or "not served by its CRD" in e.message
        or "Duplicate value" in e.message
    }


def test_bundled_crd_verdicts_match_the_apiserver(controlplane: ControlPlane) -> None:
    _install(controlplane)
    real = _real()
    assert len(real) >= 30  # the corpus's JobSets, LWSs, Ray, Kubeflow, Trainer and Volcano objects
    kept: list[Document] = []
    for kind, change in _CEL_KEPT.items():
        obj = copy.deepcopy(next(d.obj for d in real if d.kind == kind))
        change(obj)
        kept.extend(parse_text(yaml.safe_dump(obj), f"kept-{kind}.yaml").documents)
    docs = real + _mutants(real) + kept
    offline = validate_documents(docs, "1.37")
    server = dry_run(docs, kubeconfig=str(controlplane.kubeconfig))
    offline_bad = _schema_errors(offline)
    server_bad = {(Path(e.file).name, e.kind, e.name) for e in server}
    assert server_bad <= offline_bad, {
        "valid offline, refused by the apiserver": sorted(server_bad - offline_bad),
        "server": [str(e.message) for e in server if (Path(e.file).name, e.kind, e.name) not in offline_bad],
    }
    assert offline_bad <= server_bad, {
        "invalid offline, accepted by the apiserver": sorted(offline_bad - server_bad),
        "offline": [
            e.message for e in offline.errors if (Path(e.file).name, e.kind, e.name) not in server_bad
        ],
    }
    mutants = {n for n, _k, _n in server_bad if n.startswith("mutant-")}
    made = {Path(d.file).name for d in docs if Path(d.file).name.startswith("mutant-")}
    assert len(made) >= 4 * len({(d.api_version, d.kind) for d in real})
    assert mutants == made  # every broken copy was refused by both
    assert kept
    assert not {n for n, _k, _n in server_bad | offline_bad if n.startswith("kept-")}


def test_migrated_custom_resources_get_the_apiservers_verdict(controlplane: ControlPlane) -> None:
    """migrate's output for operator custom resources gets the apiserver's verdict. migrate used to link operator
    pod templates to a PodGroup with spec.schedulingGroup, which the operators' released CRDs (generated from
    older core types) do not declare: the apiserver refused those objects. It now reports such gangs instead."""
    from kubedra.migrate.context import MigrateOptions
    from kubedra.migrate.engine import Migrator, load_sources

    _install(controlplane)
    report = Migrator(MigrateOptions(target_version="1.37")).migrate(
        load_sources([str(p) for p in outcomes.inputs()])
    )
    docs: list[Document] = []
    for r in report.files:
        parsed = parse_text(r.output, r.file)
        if not r.template and not parsed.errors:
            docs.extend(d for d in parsed.documents if d.api_version and d.kind and _bundled(d))
    offline = validate_documents(docs, "1.37")
    server = dry_run(docs, kubeconfig=str(controlplane.kubeconfig))
    offline_bad = _schema_errors(offline)
    server_bad = {(Path(e.file).name, e.kind, e.name) for e in server}
    assert offline_bad == server_bad, {
        "offline only": offline_bad - server_bad,
        "server only": server_bad - offline_bad,
    }
    assert not [
        e for e in offline.errors if "schedulingGroup" in (e.path or "") or "workloadRef" in (e.path or "")
    ]
