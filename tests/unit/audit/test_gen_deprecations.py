"""scripts/gen_deprecations.py on synthetic k8s.io/api trees (no network): markers, registrations, deletions."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import yaml

from .helpers import REPO

spec = importlib.util.spec_from_file_location("gen_deprecations", REPO / "scripts" / "gen_deprecations.py")
assert spec is not None
assert spec.loader is not None
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)

LIFECYCLE = """\
package v1beta1

func (in *DeviceClass) APILifecycleIntroduced() (major, minor int) {
	return 1, 32
}
func (in *DeviceClass) APILifecycleDeprecated() (major, minor int) {
	return 1, 35
}
func (in *DeviceClass) APILifecycleRemoved() (major, minor int) {
	return 1, 38
}
func (in *DeviceClassList) APILifecycleIntroduced() (major, minor int) {
	return 1, 32
}
func (in *DeviceClass) APILifecycleReplacement() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "resource.k8s.io", Version: "v1", Kind: "DeviceClass"}
}
"""


def package(root: Path, rel: str, group: str, kinds: list[str], lifecycle: str | None = None) -> None:
    pkg = root / rel
    pkg.mkdir(parents=True)
    known = "\n".join(f"\t\t&{k}{{}},\n\t\t&{k}List{{}}," for k in kinds)
    (pkg / "register.go").write_text(
        f'package x\n\nconst GroupName = "{group}"\n\nfunc addKnownTypes(scheme *runtime.Scheme) error {{\n'
        f"\tscheme.AddKnownTypes(SchemeGroupVersion,\n{known}\n\t)\n\treturn nil\n}}\n"
    )
    if lifecycle:
        (pkg / "zz_generated.prerelease-lifecycle.go").write_text(lifecycle)


def test_parse_and_merge(tmp_path: Path) -> None:
    new, old = tmp_path / "new", tmp_path / "old"
    package(new, "resource/v1beta1", "resource.k8s.io", ["DeviceClass"], LIFECYCLE)
    package(new, "scheduling/v1alpha2", "scheduling.k8s.io", ["PodGroup"])
    package(old, "resource/v1beta1", "resource.k8s.io", ["DeviceClass"], LIFECYCLE)
    package(old, "resource/v1alpha2", "resource.k8s.io", ["ResourceClass"])  # gone in the newer module
    package(old, "scheduling/v1alpha2", "scheduling.k8s.io", ["PodGroup"])
    merged = gen.merge(
        {"v0.37.0": gen.parse_module(new, "v0.37.0"), "v0.30.0": gen.parse_module(old, "v0.30.0")}
    )
    dc = merged[("resource.k8s.io", "v1beta1", "DeviceClass")]
    assert (dc["introduced"], dc["deprecated"], dc["removed"], dc["replacement"]) == (
        "1.32",
        "1.35",
        "1.38",
        "resource.k8s.io/v1",
    )
    assert ("resource.k8s.io", "v1beta1", "DeviceClassList") not in merged
    # registered only (alpha, no markers): introduced from the first module that has it, when known
    pg = merged[("scheduling.k8s.io", "v1alpha2", "PodGroup")]
    assert pg["lifecycleFrom"] == "registration"
    assert "introduced" not in pg
    # deleted from k8s.io/api after v0.30: not served from 1.31
    rc = merged[("resource.k8s.io", "v1alpha2", "ResourceClass")]
    assert rc["removed"] == "1.31"
    assert rc["deletedFromModule"] == "1.31"
    text = gen.render(merged, ["v0.37.0", "v0.30.0"])
    entries = yaml.safe_load(text)["entries"]
    assert entries == sorted(entries, key=lambda e: (e["group"], e["version"], e["kind"]))
    assert all("_pkg" not in e for e in entries)


def test_committed_data_has_what_the_issue_needs() -> None:
    data = yaml.safe_load((REPO / "src/kubedra/data/deprecations/k8s-api.yaml").read_text())
    by = {(e["group"], e["version"], e["kind"]): e for e in data["entries"]}
    assert by[("resource.k8s.io", "v1beta1", "ResourceClaim")]["removed"] == "1.38"
    assert by[("resource.k8s.io", "v1alpha2", "ResourceClass")]["removed"] == "1.31"
    assert by[("resource.k8s.io", "v1alpha1", "PodScheduling")]["introduced"] == "1.26"
    assert by[("extensions", "v1beta1", "Ingress")]["removed"] == "1.22"
    assert by[("policy", "v1beta1", "PodSecurityPolicy")]["removed"] == "1.25"
    assert by[("batch", "v1beta1", "CronJob")]["removed"] == "1.25"
    assert by[("autoscaling", "v2beta2", "HorizontalPodAutoscaler")]["removed"] == "1.26"
    assert by[("flowcontrol.apiserver.k8s.io", "v1beta3", "FlowSchema")]["removed"] == "1.32"
    assert by[("apiextensions.k8s.io", "v1beta1", "CustomResourceDefinition")]["removed"] == "1.22"
    assert by[("scheduling.k8s.io", "v1alpha2", "PodGroup")]["removed"] == "1.37"
    assert by[("scheduling.k8s.io", "v1beta1", "Workload")]["introduced"] == "1.37"
