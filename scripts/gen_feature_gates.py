#!/usr/bin/env python3
"""Generate src/kubedra/data/feature-gates.yaml from the Go source of every Kubernetes release it covers.

A release's feature gates are what its components register: the maps of ``featuregate.VersionedSpecs`` (1.31 on;
``featuregate.FeatureSpec`` before) in ``k8s.io/kubernetes`` ``pkg/features`` and in the staging modules whose
gates kube-apiserver, kube-scheduler, kube-controller-manager and the kubelet also accept (``k8s.io/apiserver``,
``k8s.io/apiextensions-apiserver``, ``k8s.io/controller-manager``, ``k8s.io/component-base``). This script
downloads each module at the release's tag through the Go module proxy (``go mod download``; the staging modules
are tagged ``v0.<minor>.<patch>`` alongside ``v1.<minor>.<patch>``), reads those maps and writes:

- ``gates``: for the gates kubedra models (DRA's, the kubelet's ResourceHealthStatus and the gang-scheduling
  ones, :data:`TRACKED`), the stage, default and lock at every release, as a component of that release runs
  them by default (emulation version = the release, compatibility version = one minor behind, so a spec with a
  ``MinCompatibilityVersion`` of the release itself does not apply yet);
- ``removed``: every gate (any component's) that the release no longer registers although the previous one
  did; a component started with such a gate in ``--feature-gates`` or ``featureGates`` fails with
  "unrecognized feature gate" (component-base featuregate ``Set``/``SetFromMap``);
- ``tags``: the tag each release was read at. Released minors use their newest patch on the proxy; a supported
  minor not released yet uses the pre-release named in data/versions.yaml ``unverified``.

``mergedInto`` (a gate whose removal is only a note because another one took over) is not in the Go source and
is kept in :data:`MERGED_INTO` below with its source.

Usage:
    python scripts/gen_feature_gates.py             # write the data file
    python scripts/gen_feature_gates.py --check     # exit 1 if the committed file is stale
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "src" / "kubedra" / "data"
DEFAULT_OUTPUT = DATA / "feature-gates.yaml"
# The first release whose gates are generated (the oldest one audit's gate history needs: DRAControlPlaneController
# existed only in 1.31).
FIRST_MINOR = 31
# Modules and the folders whose non-test Go files hold feature-gate maps; (module, folder, staging?).
SOURCES = (
    ("k8s.io/kubernetes", "pkg/features", False),
    ("k8s.io/apiserver", "pkg/features", True),
    ("k8s.io/apiextensions-apiserver", "pkg/features", True),
    ("k8s.io/controller-manager", "pkg/features", True),
    ("k8s.io/component-base", "logs/api/v1", True),
    ("k8s.io/component-base", "metrics/features", True),
    ("k8s.io/component-base", "zpages/features", True),
)
# Gates kubedra models: every DRA gate, and these.
TRACKED_PREFIX = "DRA"
TRACKED = (
    "DynamicResourceAllocation",
    "ResourceHealthStatus",
    "GenericWorkload",
    "GangScheduling",
    "WorkloadAwarePreemption",
    "TopologyAwareWorkloadScheduling",
    "WorkloadWithJob",  # a Job's own spec.scheduling gang (migrate writes it at 1.37)
)
# KEP-4671 (kubernetes/enhancements keps/sig-scheduling/4671-gang-scheduling): GenericWorkload took over the
# gang-scheduling gates in 1.37 (pkg/features/kube_features.go at v1.37.2 no longer registers them).
MERGED_INTO = {"GangScheduling": "GenericWorkload", "WorkloadAwarePreemption": "GenericWorkload"}

_MAP = re.compile(r"map\[featuregate\.Feature\]featuregate\.(?P<type>VersionedSpecs|FeatureSpec)\s*\{")
_ENTRY = re.compile(r"(?P<key>[A-Za-z_][\w.]*)\s*:\s*\{")
_CONST = re.compile(r"\b(?P<ident>\w+)\s+featuregate\.Feature\s*=\s*\"(?P<name>[^\"]+)\"")
_FIELD = {
    "version": re.compile(r"Version:\s*version\.MustParse\(\"(\d+)\.(\d+)\"\)"),
    "min_compat": re.compile(r"MinCompatibilityVersion:\s*version\.MustParse\(\"(\d+)\.(\d+)\"\)"),
    "default": re.compile(r"\bDefault:\s*(true|false)"),
    "stage": re.compile(r"PreRelease:\s*featuregate\.(\w+)"),
    "locked": re.compile(r"LockToDefault:\s*(true|false)"),
}
_STAGES = {"Alpha": "alpha", "Beta": "beta", "GA": "ga", "Deprecated": "deprecated"}


def _go_env() -> dict[str, str]:
    # GOTOOLCHAIN=auto: a pre-release module may need a newer Go than the one installed just to be downloaded.
    return dict(os.environ, GOFLAGS="-mod=mod", GO111MODULE="on", GOTOOLCHAIN="auto")


def _go(*args: str) -> str:
    try:
        out = subprocess.run(
            ["go", *args], check=True, capture_output=True, text=True, env=_go_env(), cwd="/"
        )
    except FileNotFoundError:
        sys.exit("gen_feature_gates: the 'go' command is needed (it downloads the modules from the proxy)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"gen_feature_gates: go {' '.join(args)} failed: {e.stderr.strip()}")
    return out.stdout


def release_tags(first_minor: int, newest_minor: int, prereleases: dict[str, str]) -> dict[str, str]:
    """minor ("1.37") -> the k8s.io/kubernetes tag it is read at."""
    newest: dict[int, tuple[int, str]] = {}
    for v in _go("list", "-m", "-versions", "k8s.io/kubernetes").split()[1:]:
        m = re.fullmatch(r"v1\.(\d+)\.(\d+)", v)
        if m and (int(m.group(1)) not in newest or int(m.group(2)) > newest[int(m.group(1))][0]):
            newest[int(m.group(1))] = (int(m.group(2)), v)
    tags: dict[str, str] = {}
    for minor in range(first_minor, newest_minor + 1):
        release = f"1.{minor}"
        if release in prereleases:
            tags[release] = prereleases[release]
        elif minor in newest:
            tags[release] = newest[minor][1]
        else:
            sys.exit(
                f"gen_feature_gates: no released k8s.io/kubernetes v1.{minor}.x and no pre-release named"
            )
    return tags


def module_dir(module: str, tag: str, staging: bool) -> Path:
    version = "v0." + tag.split(".", 1)[1] if staging else tag
    info = json.loads(_go("mod", "download", "-json", f"{module}@{version}"))
    if info.get("Error") or not info.get("Dir"):
        sys.exit(f"gen_feature_gates: {module}@{version}: {info.get('Error')}")
    return Path(info["Dir"])


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def _block(text: str, open_at: int) -> tuple[str, int]:
    """The text inside the brace at ``open_at`` and the index after its closing brace."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : i], i + 1
    raise ValueError("unbalanced braces")


def _spec(text: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, rx in _FIELD.items():
        m = rx.search(text)
        if m is None:
            continue
        if name in ("version", "min_compat"):
            out[name] = (int(m.group(1)), int(m.group(2)))
        elif name == "stage":
            out[name] = _STAGES.get(m.group(1), m.group(1).lower())
        else:
            out[name] = m.group(1) == "true"
    return out


def parse_gate_maps(text: str) -> dict[str, list[dict[str, object]]]:
    """Gate identifier (``genericfeatures.WatchList`` or ``DRAAdminAccess``) -> its specs, from one Go file."""
    text = _strip_comments(text)
    out: dict[str, list[dict[str, object]]] = {}
    for m in _MAP.finditer(text):
        body, _ = _block(text, m.end() - 1)
        pos = 0
        while True:
            e = _ENTRY.search(body, pos)
            if e is None:
                break
            inner, pos = _block(body, e.end() - 1)
            if m.group("type") == "FeatureSpec":
                specs = [_spec(inner)]
            else:
                specs = []
                i = 0
                while (j := inner.find("{", i)) >= 0:
                    one, i = _block(inner, j)
                    specs.append(_spec(one))
            out.setdefault(e.group("key"), specs)
    return out


def release_gates(tag: str) -> dict[str, list[dict[str, object]]]:
    """Every gate registered at ``tag`` -> its specs (k8s.io/kubernetes first: its map also re-lists staging
    gates, with the same specs)."""
    consts: dict[str, str] = {}
    raw: dict[str, list[dict[str, object]]] = {}
    for module, folder, staging in SOURCES:
        root = module_dir(module, tag, staging) / folder
        if not root.is_dir():
            continue
        for f in sorted(root.glob("*.go")):
            if f.name.endswith("_test.go"):
                continue
            text = f.read_text(encoding="utf-8")
            consts.update({c.group("ident"): c.group("name") for c in _CONST.finditer(text)})
            for key, specs in parse_gate_maps(text).items():
                raw.setdefault(key, specs)
    gates: dict[str, list[dict[str, object]]] = {}
    for key, specs in raw.items():
        ident = key.rsplit(".", 1)[-1]
        gates.setdefault(consts.get(ident, ident), specs)
    return gates


def row(specs: list[dict[str, object]], release: tuple[int, int]) -> dict[str, object] | None:
    """The gate as a component of ``release`` runs it by default, or None when no spec applies yet."""
    compat = (release[0], release[1] - 1)
    best = None
    for spec in specs:
        version = spec.get("version", release)  # FeatureSpec (1.31's unversioned map): the release itself
        if version > release:  # type: ignore[operator]
            continue
        if "min_compat" in spec and spec["min_compat"] > compat:  # type: ignore[operator]
            continue
        if best is None or version >= best.get("version", release):  # type: ignore[operator]
            best = spec
    if best is None:
        return None
    out: dict[str, object] = {"stage": best.get("stage", "ga"), "default": bool(best.get("default"))}
    if best.get("locked"):
        out["locked"] = True
    return out


def tracked(name: str) -> bool:
    return name.startswith(TRACKED_PREFIX) or name in TRACKED


def generate(tags: dict[str, str]) -> str:
    per_release = {release: release_gates(tag) for release, tag in tags.items()}
    releases = list(tags)
    gates: dict[str, dict[str, dict[str, object]]] = {}
    for release in releases:
        major, minor = (int(x) for x in release.split("."))
        for name, specs in per_release[release].items():
            if not tracked(name):
                continue
            r = row(specs, (major, minor))
            if r is not None:
                gates.setdefault(name, {})[release] = r
    removed = {}
    for before, after in itertools.pairwise(releases):
        gone = sorted(set(per_release[before]) - set(per_release[after]))
        if gone:
            removed[after] = gone
    lines = [
        "# GENERATED by scripts/gen_feature_gates.py from the Go source of each release (do not edit by hand;",
        "# docs/versions.md says how to add a release). Source: k8s.io/kubernetes pkg/features and the feature",
        "# files of k8s.io/apiserver, apiextensions-apiserver, controller-manager and component-base, at the tags",
        "# below (staging modules at v0.<minor>.<patch>).",
        "# gates: DRA-related gates per release as a component of that release runs them by default.",
        "#   stage: alpha | beta | ga | deprecated ; default: the value without --feature-gates; locked: cannot be",
        "#   changed. A release after a gate's first one that is not listed: the gate no longer exists (audit",
        "#   reports it). Read by kubedra.k8s.featuregates (models and audit's cluster.feature-gate check).",
        "# removed: every gate (any component's) a release no longer registers although the one before did; a",
        '#   component started with it fails with "unrecognized feature gate" (component-base featuregate).',
        "# mergedInto: gates whose removal is only a note, because another gate took over (KEP-4671).",
        "tags:",
        *(f'  "{r}": {t}' for r, t in tags.items()),
        "gates:",
    ]
    for name in sorted(gates, key=lambda n: (min(gates[n]), n)):
        lines.append(f"  {name}:")
        for release, info in gates[name].items():
            fields = f"stage: {info['stage']}, default: {str(info['default']).lower()}"
            if info.get("locked"):
                fields += ", locked: true"
            lines.append(f'    "{release}": {{{fields}}}')
    lines.append("removed:")
    for release, names in removed.items():
        lines.append(f'  "{release}":')
        lines.extend(f"    - {n}" for n in names)
    lines.append("mergedInto:")
    lines.extend(f"  {k}: {v}" for k, v in MERGED_INTO.items())
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    ap.add_argument("--check", action="store_true", help="exit 1 if the output file differs from a fresh run")
    args = ap.parse_args(argv)
    versions = yaml.safe_load((DATA / "versions.yaml").read_text(encoding="utf-8"))
    newest = max(int(v.split(".")[1]) for v in versions["supported"])
    tags = release_tags(
        FIRST_MINOR, newest, {str(k): str(v) for k, v in (versions.get("unverified") or {}).items()}
    )
    text = generate(tags)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run python scripts/gen_feature_gates.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output} ({len(tags)} releases: {', '.join(tags.values())})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
