#!/usr/bin/env python3
"""Rebuild src/kubedra/data/crds/: the CRD schemas of the operator kinds kubedra's workload walker knows.

Each CRD comes from the operator's own released manifest at a pinned version, read from its Go module
(``go mod download -json MODULE@VERSION``, the Go module proxy) or, where the proxy refuses the module
(volcano.sh/volcano), from a git checkout of the release tag (``--git owner/name=PATH`` for a local clone or
mirror; otherwise ``git clone --depth 1 --branch TAG``). Only what validation needs is kept: group, kind,
plural, scope and, per version, ``served`` and ``openAPIV3Schema`` without descriptions; repeated subtrees
(pod templates appear many times per CRD) are stored once under ``defs`` and referenced as
``{"$def": "dN"}``. The header of each file records module@version, path and licence. Run:

    python scripts/gen_crd_schemas.py [--git volcano-sh/volcano=/path/to/clone]

Nothing downloads at build or run time: the generated files are committed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).resolve().parents[1] / "src" / "kubedra" / "data" / "crds"

# (source kind, module or repo, version, path in it, licence)
SOURCES: list[tuple[str, str, str, str, str]] = [
    (
        "go",
        "sigs.k8s.io/jobset",
        "v0.10.1",
        "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",
        "Apache-2.0",
    ),
    (
        "go",
        "sigs.k8s.io/lws",
        "v0.7.0",
        "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
        "Apache-2.0",
    ),
    (
        "go",
        "github.com/ray-project/kuberay/ray-operator",
        "v1.5.0",
        "config/crd/bases/ray.io_rayclusters.yaml",
        "Apache-2.0",
    ),
    (
        "go",
        "github.com/ray-project/kuberay/ray-operator",
        "v1.5.0",
        "config/crd/bases/ray.io_rayjobs.yaml",
        "Apache-2.0",
    ),
    (
        "go",
        "github.com/ray-project/kuberay/ray-operator",
        "v1.5.0",
        "config/crd/bases/ray.io_rayservices.yaml",
        "Apache-2.0",
    ),
    *[
        (
            "go",
            "github.com/kubeflow/training-operator",
            "v1.9.2",
            f"manifests/base/crds/kubeflow.org_{p}.yaml",
            "Apache-2.0",
        )
        for p in ("pytorchjobs", "tfjobs", "xgboostjobs", "paddlejobs", "jaxjobs")
    ],
    # MPIJob: kubeflow.org/v1 from the training-operator, kubeflow.org/v2beta1 from the MPI operator; a cluster
    # has one of the two CRDs, kubedra accepts either version (each against its own operator's schema)
    (
        "go",
        "github.com/kubeflow/training-operator",
        "v1.9.2",
        "manifests/base/crds/kubeflow.org_mpijobs.yaml",
        "Apache-2.0",
    ),
    (
        "go",
        "github.com/kubeflow/mpi-operator",
        "v0.6.0",
        "manifests/base/kubeflow.org_mpijobs.yaml",
        "Apache-2.0",
    ),
    *[
        (
            "go",
            "github.com/kubeflow/trainer/v2",
            "v2.1.0",
            f"manifests/base/crds/trainer.kubeflow.org_{p}.yaml",
            "Apache-2.0",
        )
        for p in ("trainjobs", "trainingruntimes", "clustertrainingruntimes")
    ],
    (
        "git",
        "volcano-sh/volcano",
        "v1.15.1",
        "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml",
        "Apache-2.0",
    ),
    (
        "git",
        "volcano-sh/volcano",
        "v1.15.1",
        "config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml",
        "Apache-2.0",
    ),
]

# Schema keywords whose value is a map of name -> schema, or a schema, or a list of schemas
_MAPS = ("properties", "patternProperties", "definitions")
_ONE = ("items", "additionalProperties", "not")
_LISTS = ("allOf", "anyOf", "oneOf")
_DROP = ("description", "example", "externalDocs")


def strip(schema: Any) -> Any:
    """The schema without descriptions (only where ``description`` is a keyword, never a property name)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k in _DROP:
            continue
        if k in _MAPS and isinstance(v, dict):
            out[k] = {name: strip(s) for name, s in v.items()}
        elif k in _ONE and isinstance(v, dict):
            out[k] = strip(v)
        elif k in _LISTS and isinstance(v, list):
            out[k] = [strip(s) for s in v]
        elif k == "x-kubernetes-validations" and isinstance(v, list):
            out[k] = [{rk: rv for rk, rv in rule.items() if rk != "description"} for rule in v]
        else:
            out[k] = v
    return out


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def dedupe(schemas: list[Any], min_size: int = 400) -> tuple[list[Any], dict[str, Any]]:
    """Subtrees (schemas under properties/items/...) seen more than once and at least ``min_size`` bytes of JSON
    are stored once in ``defs`` and replaced by ``{"$def": name}``; the largest are shared first."""
    counts: dict[str, int] = {}

    def count(s: Any) -> None:
        if not isinstance(s, dict):
            return
        c = _canon(s)
        if len(c) >= min_size:
            counts[c] = counts.get(c, 0) + 1
        for child in _children(s):
            count(child)

    for s in schemas:
        count(s)
    shared = {c for c, n in counts.items() if n > 1}
    names: dict[str, str] = {}
    defs: dict[str, Any] = {}

    def replace(s: Any, top: bool = False) -> Any:
        if not isinstance(s, dict):
            return s
        c = _canon(s)
        if not top and c in shared:
            if c not in names:
                name = "d" + hashlib.sha256(c.encode()).hexdigest()[:10]
                names[c] = name
                defs[name] = replace(s, top=True)
            return {"$def": names[c]}
        out = dict(s)
        for k in _MAPS:
            if isinstance(out.get(k), dict):
                out[k] = {n: replace(v) for n, v in out[k].items()}
        for k in _ONE:
            if isinstance(out.get(k), dict):
                out[k] = replace(out[k])
        for k in _LISTS:
            if isinstance(out.get(k), list):
                out[k] = [replace(v) for v in out[k]]
        return out

    return [replace(s) for s in schemas], dict(sorted(defs.items()))


def _children(s: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for k in _MAPS:
        if isinstance(s.get(k), dict):
            out.extend(s[k].values())
    for k in _ONE:
        if isinstance(s.get(k), dict):
            out.append(s[k])
    for k in _LISTS:
        if isinstance(s.get(k), list):
            out.extend(s[k])
    return out


def _go_dir(module: str, version: str) -> Path:
    env = {**os.environ, "GOFLAGS": "-mod=mod"}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            ["go", "mod", "init", "kubedra-crds"], cwd=tmp, env=env, check=True, capture_output=True
        )
        res = subprocess.run(
            ["go", "mod", "download", "-json", f"{module}@{version}"],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
        )
    info = json.loads(res.stdout or "{}")
    if res.returncode or "Dir" not in info:
        sys.exit(f"go mod download {module}@{version}: {info.get('Error') or res.stderr.strip()}")
    return Path(info["Dir"])


def _git_text(repo: str, tag: str, path: str, clones: dict[str, str]) -> str:
    where = clones.get(repo)
    if where is None:
        where = tempfile.mkdtemp(prefix="kubedra-crds-")
        subprocess.run(
            ["git", "clone", "--quiet", "--depth", "1", "--branch", tag, f"https://github.com/{repo}", where],
            check=True,
        )
        clones[repo] = where
    git_dir = ["--git-dir", where] if not (Path(where) / ".git").exists() else ["-C", where]
    return subprocess.run(
        ["git", *git_dir, "show", f"{tag}:{path}"], capture_output=True, text=True, check=True
    ).stdout


def build(clones: dict[str, str]) -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    for how, module, version, path, licence in SOURCES:
        text = (
            (_go_dir(module, version) / path).read_text()
            if how == "go"
            else _git_text(module, version, path, clones)
        )
        crd = yaml.safe_load(text)
        spec = crd["spec"]
        versions = [v for v in spec["versions"] if v.get("served")]
        schemas, defs = dedupe([strip(v["schema"]["openAPIV3Schema"]) for v in versions])
        source = {
            "module" if how == "go" else "repository": f"{module}@{version}"
            if how == "go"
            else f"github.com/{module}@{version}",
            "path": path,
            "licence": licence,
        }
        entry = {
            "group": spec["group"],
            "kind": spec["names"]["kind"],
            "plural": spec["names"]["plural"],
            "scope": spec["scope"],
            "versions": [{"name": v["name"], "schema": s} for v, s in zip(versions, schemas, strict=True)],
            "defs": defs,
        }
        name = f"{spec['group']}_{spec['names']['plural']}"
        if name in files:  # a second operator's CRD of the same resource (MPIJob): one file per source
            name += "_" + module.rsplit("/", 1)[-1]
        files[name] = {"source": source, **entry}
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--git", action="append", default=[], help="owner/name=PATH of a local clone or mirror"
    )
    args = parser.parse_args()
    clones = dict(g.split("=", 1) for g in args.git)
    files = build(clones)
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    total = 0
    for name, data in sorted(files.items()):
        out = OUT / f"{name}.json"
        header = {
            "_comment": "Generated by scripts/gen_crd_schemas.py from the operator's released CRD manifest "
            "(descriptions stripped, repeated subtrees under defs); do not edit."
        }
        out.write_text(json.dumps({**header, **data}, separators=(",", ":"), sort_keys=False) + "\n")
        total += out.stat().st_size
        print(f"{out.name}: {out.stat().st_size:,} bytes", file=sys.stderr)
    print(f"{len(files)} CRDs, {total:,} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
