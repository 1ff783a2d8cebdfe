#!/usr/bin/env python3
"""Generate src/kubedra/data/deprecations/k8s-api.yaml from k8s.io/api's prerelease-lifecycle markers.

Every built-in API type in ``k8s.io/api`` carries generated methods in ``zz_generated.prerelease-lifecycle.go``:
``APILifecycleIntroduced``, ``APILifecycleDeprecated``, ``APILifecycleRemoved`` (each returning major, minor) and
``APILifecycleReplacement`` (a GroupVersionKind). This script downloads the module through the Go module proxy
(``go mod download -json k8s.io/api@<version>``), reads those files and writes one YAML entry per
group/version/kind.

Group versions that were deleted from ``k8s.io/api`` (extensions/v1beta1, policy/v1beta1, flowcontrol v1beta1..3,
batch/v1beta1, autoscaling/v2beta1..2, ...) are found by also reading older module versions: by default the newest
patch of every minor from v0.19 (the first release with markers) to the newest one. For a kind present in several
module versions the newest module wins. Anything older than the markers belongs in overrides.yaml, kept by hand.

Usage:
    python scripts/gen_deprecations.py                       # newest patch of v0.19 .. newest minor
    python scripts/gen_deprecations.py --versions v0.37.2 v0.32.9 --output /tmp/k8s-api.yaml
    python scripts/gen_deprecations.py --check                # exit 1 if the committed file is stale
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO / "src" / "kubedra" / "data" / "deprecations" / "k8s-api.yaml"
MODULE = "k8s.io/api"
# Modules holding built-in API types, and the folder under which their <group>/<version> packages live.
# apiextensions.k8s.io (CRDs) and apiregistration.k8s.io (APIService) are served by kube-apiserver but their
# types live outside k8s.io/api. From v0.38.0-beta.0 the apiextensions.k8s.io types moved out of
# k8s.io/apiextensions-apiserver into k8s.io/apiextensions-api (its pkg/apis/apiextensions/v1 keeps only
# conversion code); a module absent at a version is skipped there.
MODULES = (
    ("k8s.io/api", "."),
    ("k8s.io/apiextensions-apiserver", "pkg/apis"),
    ("k8s.io/apiextensions-api", "pkg/apis"),
    ("k8s.io/kube-aggregator", "pkg/apis"),
)
FIRST_MINOR_WITH_MARKERS = 19

_FUNC = re.compile(
    r"func \(in \*(?P<kind>\w+)\) APILifecycle(?P<what>Introduced|Deprecated|Removed)\(\) \(major, minor int\) \{\s*"
    r"return (?P<major>\d+), (?P<minor>\d+)"
)
_REPLACEMENT = re.compile(
    r"func \(in \*(?P<kind>\w+)\) APILifecycleReplacement\(\) schema\.GroupVersionKind \{\s*"
    r'return schema\.GroupVersionKind\{Group: "(?P<group>[^"]*)", Version: "(?P<version>[^"]*)", Kind: "(?P<rkind>[^"]*)"\}'
)
_GROUP_CONST = re.compile(r'^\s*(?:const\s+)?GroupName\s*=\s*"(?P<group>[^"]*)"', re.M)
_GROUP_TAG = re.compile(r"^//\s*\+groupName=(?P<group>\S*)\s*$", re.M)


def _go(*args: str) -> str:
    env = dict(os.environ, GOFLAGS="-mod=mod", GO111MODULE="on", GOTOOLCHAIN="auto")
    try:
        out = subprocess.run(["go", *args], check=True, capture_output=True, text=True, env=env, cwd="/")
    except FileNotFoundError:
        sys.exit(
            "gen_deprecations: the 'go' command is needed (it downloads k8s.io/api from the module proxy)"
        )
    except subprocess.CalledProcessError as e:
        sys.exit(f"gen_deprecations: go {' '.join(args)} failed: {e.stderr.strip()}")
    return out.stdout


def _patches(module: str) -> dict[int, list[str]]:
    """minor -> released versions of that minor, newest patch first."""
    out: dict[int, list[tuple[int, str]]] = {}
    for v in _go("list", "-m", "-versions", module).split()[1:]:
        m = re.fullmatch(r"v0\.(\d+)\.(\d+)", v)
        if m:
            out.setdefault(int(m.group(1)), []).append((int(m.group(2)), v))
    return {minor: [v for _, v in sorted(vs, reverse=True)] for minor, vs in out.items()}


def unverified_tags() -> list[str]:
    """k8s.io/api versions of the supported releases modelled from a pre-release (data/versions.yaml
    ``unverified``: ``v1.38.0-beta.0`` -> ``v0.38.0-beta.0``)."""
    data = yaml.safe_load((REPO / "src" / "kubedra" / "data" / "versions.yaml").read_text(encoding="utf-8"))
    return ["v0." + str(tag).split(".", 1)[1] for tag in (data.get("unverified") or {}).values()]


def newest_patches(first_minor: int) -> list[str]:
    """Newest released (non-prerelease) patch of each k8s.io/api v0.<minor> from ``first_minor`` on, and the
    pre-release of a supported release not out yet (data/versions.yaml ``unverified``), newest first."""
    patches = _patches(MODULE)
    released = [patches[m][0] for m in sorted(patches, reverse=True) if m >= first_minor]
    pre = [v for v in unverified_tags() if int(v.split(".")[1]) not in patches]
    return sorted(pre, key=lambda v: int(v.split(".")[1]), reverse=True) + released


def module_dir(version: str, module: str = MODULE) -> Path | None:
    """Download ``module`` at ``version``, or the newest patch of the same minor the proxy has; None if none."""
    minor = int(version.split(".")[1])
    candidates = [version] + [v for v in _patches(module).get(minor, []) if v != version]
    for v in candidates:
        env = dict(os.environ, GOFLAGS="-mod=mod", GO111MODULE="on", GOTOOLCHAIN="auto")
        out = subprocess.run(
            ["go", "mod", "download", "-json", f"{module}@{v}"],
            capture_output=True,
            text=True,
            env=env,
            cwd="/",
        )
        try:
            info = json.loads(out.stdout)
        except ValueError:
            continue
        if not info.get("Error") and info.get("Dir"):
            return Path(info["Dir"])
    print(f"warning: {module} not available for v0.{minor}; skipped", file=sys.stderr)
    return None


def _group_of(pkg: Path) -> str | None:
    for name in ("register.go", "doc.go"):
        f = pkg / name
        if not f.exists():
            continue
        text = f.read_text(encoding="utf-8")
        m = _GROUP_CONST.search(text) if name == "register.go" else _GROUP_TAG.search(text)
        if m:
            return m.group("group")
    return None


def _skip_kind(kind: str) -> bool:
    # List wrappers and subresource option types are not objects anybody writes in a manifest.
    return kind == "List" or kind.endswith("List") or kind.endswith("Options")


def _registered_kinds(pkg: Path) -> list[str]:
    """Kinds the package registers in its scheme (``addKnownTypes``): they exist whether or not markers do."""
    f = pkg / "register.go"
    if not f.exists():
        return []
    text = f.read_text(encoding="utf-8")
    start = text.find("func addKnownTypes")
    if start < 0:
        return []
    end = text.find("\n}\n", start)
    return [k for k in re.findall(r"&(\w+)\{\}", text[start:end]) if not _skip_kind(k)]


def parse_module(
    root: Path,
    version: str,
    module: str = MODULE,
    entries: dict[tuple[str, str, str], dict[str, object]] | None = None,
) -> dict[tuple[str, str, str], dict[str, object]]:
    """Every registered kind of every group/version package, with its lifecycle markers where it has them."""
    entries = {} if entries is None else entries
    for register in sorted(root.glob("*/*/register.go")):
        pkg = register.parent
        if not re.fullmatch(r"v\d+(?:(?:alpha|beta)\d+)?", pkg.name):
            continue
        group = _group_of(pkg)
        if group is None:
            print(f"warning: no GroupName in {pkg.relative_to(root)}; skipped", file=sys.stderr)
            continue
        api_version = pkg.name
        rel = f"{module}/{pkg.relative_to(root)}"
        for kind in _registered_kinds(pkg):
            entries.setdefault((group, api_version, kind), {"_pkg": rel})
        lifecycle = pkg / "zz_generated.prerelease-lifecycle.go"
        if not lifecycle.exists():
            continue
        text = lifecycle.read_text(encoding="utf-8")
        for m in _FUNC.finditer(text):
            kind = m.group("kind")
            if _skip_kind(kind):
                continue
            e = entries.setdefault((group, api_version, kind), {"_pkg": rel})
            e[m.group("what").lower()] = f"{m.group('major')}.{m.group('minor')}"
        for m in _REPLACEMENT.finditer(text):
            kind = m.group("kind")
            if _skip_kind(kind) or (group, api_version, kind) not in entries:
                continue
            rgroup, rversion, rkind = m.group("group"), m.group("version"), m.group("rkind")
            e = entries[(group, api_version, kind)]
            e["replacement"] = f"{rgroup}/{rversion}" if rgroup else rversion
            if rkind != kind:
                e["replacementKind"] = rkind
    for e in entries.values():
        e.setdefault("source", f"{module}@{version}")
    return entries


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def merge(
    per_module: dict[str, dict[tuple[str, str, str], dict[str, object]]],
) -> dict[tuple[str, str, str], dict[str, object]]:
    """Combine module versions into one entry per group/version/kind.

    - Markers: the newest module that has the kind wins.
    - A kind without markers (alpha APIs usually have none) gets ``introduced`` from the first module version that
      registers it and is flagged ``lifecycleFrom: registration``.
    - A kind deleted from k8s.io/api cannot be served by the apiserver of the release that deleted it, so ``removed``
      becomes the first minor that lacks it when that is earlier than the marker's (v1alpha3 DeviceClass: the marker
      says 1.37, the type was deleted in 1.34).
    """
    order = sorted(per_module, key=_minor, reverse=True)
    newest, oldest = _minor(order[0]), _minor(order[-1])
    merged: dict[tuple[str, str, str], dict[str, object]] = {}
    seen: dict[tuple[str, str, str], set[int]] = {}
    for v in order:
        for key, e in per_module[v].items():
            seen.setdefault(key, set()).add(_minor(v))
            if key not in merged:
                merged[key] = dict(e)
    for key, e in merged.items():
        first, last = min(seen[key]), max(seen[key])
        if "introduced" not in e:
            e["lifecycleFrom"] = "registration"
            if first > oldest:
                e["introduced"] = f"1.{first}"
        if last >= newest:
            continue
        removed = e.get("removed")
        if removed is None or _minor(str(removed)) > last + 1:
            e["removed"] = f"1.{last + 1}"
            e["deletedFromModule"] = f"1.{last + 1}"
    return merged


def render(entries: dict[tuple[str, str, str], dict[str, object]], versions: list[str]) -> str:
    lines = [
        "# GENERATED by scripts/gen_deprecations.py from k8s.io/api prerelease-lifecycle markers. DO NOT EDIT;",
        "# put corrections and what the markers miss in overrides.yaml. Regenerate: python scripts/gen_deprecations.py",
        f"# Modules read: {', '.join(m for m, _ in MODULES)} at (newest wins per kind): {', '.join(versions)}",
        "# Upstream derives unset dates: deprecated = introduced + 3 minors, removed = deprecated + 3 minors. For",
        "# beta APIs those are planning dates, not promises (an API may stay longer or be removed on that date).",
        "# deletedFromModule: the first release whose k8s.io/api lacks the kind; it cannot be served from then on, so",
        "# removed is capped there.",
        "schemaVersion: 1",
        "entries:",
    ]
    fields = (
        "introduced",
        "deprecated",
        "removed",
        "replacement",
        "replacementKind",
        "deletedFromModule",
        "lifecycleFrom",
        "source",
    )
    for (group, version, kind), e in sorted(entries.items()):
        e.pop("_pkg", None)
        lines.append(f"- group: {json.dumps(group)}")
        lines.append(f"  version: {version}")
        lines.append(f"  kind: {kind}")
        for f in fields:
            if f in e:
                v = e[f]
                lines.append(
                    f'  {f}: "{v}"'
                    if f in ("introduced", "deprecated", "removed", "deletedFromModule")
                    else f"  {f}: {v}"
                )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--versions", nargs="*", help="k8s.io/api module versions (default: newest patch per minor)"
    )
    ap.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    ap.add_argument("--check", action="store_true", help="compare with the output file instead of writing it")
    args = ap.parse_args(argv)
    versions = args.versions or newest_patches(FIRST_MINOR_WITH_MARKERS)
    per_version: dict[str, dict[tuple[str, str, str], dict[str, object]]] = {}
    for v in versions:
        entries: dict[tuple[str, str, str], dict[str, object]] = {}
        for module, sub in MODULES:
            root = module_dir(v, module)
            if root is not None:
                parse_module(root / sub, v, module, entries)
        per_version[v] = entries
    merged = merge(per_version)
    text = render(merged, versions)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale; run scripts/gen_deprecations.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {len(merged)} entries to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
