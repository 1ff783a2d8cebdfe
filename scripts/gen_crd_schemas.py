#!/usr/bin/env python3
"""Rebuild src/kubedra/data/crds/: the CRD schemas of the operator kinds kubedra knows.

Each CRD comes from the operator's own released manifest at the release tag pinned in
``scripts/crd-sources.yaml``, read with ``git show TAG:PATH`` from a local clone or mirror (``--git
owner/name=PATH``) or else from ``git clone --depth 1 --branch TAG``. Only what validation needs is kept: group,
kind, plural, scope and, per version, ``served`` and ``openAPIV3Schema`` without descriptions; repeated subtrees
(pod templates appear many times per CRD) are stored once under ``defs`` and referenced as ``{"$def": "dN"}``.
The header of each file records the operator, repository@tag, path and licence. Run:

    python scripts/gen_crd_schemas.py [--git kubernetes-sigs/jobset=/path/to/clone ...]

Move an operator to a new release (rewrites its pin, then regenerates every schema):

    python scripts/gen_crd_schemas.py --pin jobset=v0.13.0 [--git ...]

Nothing downloads at build or run time: the generated files are committed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "kubedra" / "data" / "crds"
PINS = ROOT / "scripts" / "crd-sources.yaml"


def sources() -> dict[str, dict[str, Any]]:
    """operator name -> {repository, tag, licence, paths}, from scripts/crd-sources.yaml."""
    data: dict[str, dict[str, Any]] = yaml.safe_load(PINS.read_text())
    return data


def pin(name: str, tag: str) -> None:
    """Rewrite ``name``'s tag in crd-sources.yaml in place (comments and order kept)."""
    text = PINS.read_text()
    pattern = re.compile(rf"^({re.escape(name)}:\n(?:  .*\n)*?  tag: )\S+$", re.M)
    new, n = pattern.subn(lambda m: m.group(1) + tag, text)
    if n != 1:
        sys.exit(f"--pin {name}={tag}: no operator {name!r} in {PINS.name}")
    PINS.write_text(new)


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


def _git_text(repo: str, tag: str, path: str, clones: dict[str, str]) -> str:
    where = clones.get(repo)
    if where is None:
        where = tempfile.mkdtemp(prefix="kubedra-crds-")
        subprocess.run(
            [
                "git",
                "clone",
                "--quiet",
                "--bare",
                "--depth",
                "1",
                "--branch",
                tag,
                f"https://github.com/{repo}",
                where,
            ],
            check=True,
        )
        clones[repo] = where
    git_dir = ["--git-dir", where] if not (Path(where) / ".git").exists() else ["-C", where]
    res = subprocess.run(["git", *git_dir, "show", f"{tag}:{path}"], capture_output=True, text=True)
    if res.returncode:
        sys.exit(f"{repo}@{tag}: {path}: {res.stderr.strip()}")
    return res.stdout


def build(clones: dict[str, str]) -> dict[str, dict[str, Any]]:
    files: dict[str, dict[str, Any]] = {}
    for operator, pinned in sources().items():
        repo, tag = pinned["repository"], pinned["tag"]
        for path in pinned["paths"]:
            crd = yaml.safe_load(_git_text(repo, tag, path, clones))
            spec = crd["spec"]
            versions = [v for v in spec["versions"] if v.get("served")]
            schemas, defs = dedupe([strip(v["schema"]["openAPIV3Schema"]) for v in versions])
            source = {
                "operator": operator,
                "repository": f"github.com/{repo}@{tag}",
                "path": path,
                "licence": pinned["licence"],
            }
            entry = {
                "group": spec["group"],
                "kind": spec["names"]["kind"],
                "plural": spec["names"]["plural"],
                "scope": spec["scope"],
                "versions": [
                    {"name": v["name"], "schema": s} for v, s in zip(versions, schemas, strict=True)
                ],
                "defs": defs,
            }
            name = f"{spec['group']}_{spec['names']['plural']}"
            if name in files:  # a second operator's CRD of the same resource (MPIJob): one file per source
                name += "_" + operator
            files[name] = {"source": source, **entry}
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--git", action="append", default=[], help="owner/name=PATH of a local clone or mirror"
    )
    parser.add_argument(
        "--pin",
        action="append",
        default=[],
        help="NAME=TAG: move operator NAME to release TAG, then regenerate",
    )
    args = parser.parse_args()
    for p in args.pin:
        name, _, tag = p.partition("=")
        pin(name, tag)
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
