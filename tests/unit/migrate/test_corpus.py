"""Every corpus file migrates to objects that validate at 1.37, or is reported as manual with a reason."""

from __future__ import annotations

import re

import pytest

from kubedra.migrate.context import MigrateOptions
from kubedra.migrate.engine import Migrator, attach_validation, load_sources
from kubedra.validate.engine import validate_texts

from .helpers import CORPUS, GOLDEN, docs

EXPECTED_MANUAL = {
    "legacy-gpu": {
        "kai-gpu-fraction-pod.yaml",  # KAI gpu-fraction annotation
        "kuberay-raycluster-kai-gpu-fraction.yaml",  # same, on a Ray worker group
        "triton-gcp-helm-deployment-template.yaml.tpl",  # Helm expression for the GPU count
        "vllm-operator-vllmruntime-cr.yaml",  # GPU in the operator's own fields
    },
    "dra": {
        "nvidia-classic-dra-v1alpha2-gpu-test1.yaml",
        "nvidia-classic-dra-v1alpha2-gpu-test5-dynamic-mig.yaml",
        "nvidia-helm-deviceclass-templates.yaml.tpl",
        "kep4815-a100-mig-counterset-fragment.yaml",
        "nvidia-mig-parted-config.yaml",
        "nvidia-resourceslice-t4-aks-excerpt-UNVERIFIED-SOURCE.yaml",
        "k8s-website-resourceclaim-v1.yaml",  # as published: 'expression' is a sibling of 'cel'
        "kep4815-simple-partitions-resourceslices-v1.yaml",  # counter slice without node selection
        "example-driver-resourceslice-v1-kubectl-output.yaml",  # kubectl output: carries the server's uid
    },
}
_GPU_LIMIT = re.compile(r"^\s*nvidia\.com/(gpu|mig-[^:]*):", re.MULTILINE)


@pytest.mark.parametrize("folder", ["legacy-gpu", "dra"])
def test_corpus_folder_migrates_or_is_manual(folder: str) -> None:
    files = sorted(p for p in (CORPUS / folder).iterdir() if p.is_file() and p.name != "README.md")
    sources = load_sources([str(p) for p in files])
    assert len(sources) == len(files), "every file of the folder is an input"
    report = Migrator(MigrateOptions(target_version="1.37")).migrate(sources)
    attach_validation(report, validate_texts)
    result = validate_texts([(r.file, r.output) for r in report.files if not r.template], "1.37")
    invalid_files = {e.file for e in result.errors}
    manual_files = set()
    for r in report.files:
        name = r.file.rsplit("/", 1)[-1]
        manual = [f for f in r.findings if f.level == "manual"]
        for m in manual:
            assert m.message, f"manual item without reason or line: {m}"
            assert m.line, f"manual item without reason or line: {m}"
        if manual:
            manual_files.add(name)
            continue
        assert r.file not in invalid_files, [e for e in result.errors if e.file == r.file]
        # nothing left on the device plugin unless the file is a KEP-5004 example we converted anyway
        assert not _GPU_LIMIT.search(r.output) or name.startswith("example-driver"), name
    assert manual_files == EXPECTED_MANUAL[folder]
    # invalid output only where a human has been told to act
    assert {f.rsplit("/", 1)[-1] for f in invalid_files} <= manual_files


def test_migrating_the_migrated_corpus_changes_nothing() -> None:
    for folder in ("legacy-gpu", "dra"):
        files = [str(p) for p in sorted((CORPUS / folder).iterdir()) if p.is_file() and p.name != "README.md"]
        first = Migrator(MigrateOptions()).migrate(load_sources(files))
        from kubedra.migrate.engine import SourceFile
        from kubedra.sources.yamldoc import YamlFile

        again = [
            SourceFile(r.file, r.output, None if r.template else YamlFile(r.output, r.file))
            for r in first.files
        ]
        second = Migrator(MigrateOptions()).migrate(again)
        for a, b in zip(first.files, second.files, strict=True):
            assert b.output == a.output, a.file


def test_golden_v1beta1_to_v1() -> None:
    src = CORPUS / "dra" / "nvidia-quickstart-v1beta1-gpu-test4-mig.yaml"
    upstream = (CORPUS / "dra" / "nvidia-quickstart-v1-gpu-test4-mig.yaml").read_text()
    golden = (GOLDEN / "nvidia-quickstart-gpu-test4-mig.v1.yaml").read_text()
    report = Migrator(MigrateOptions()).migrate(load_sources([str(src)]))
    out = report.files[0].output
    assert out == golden
    assert docs(golden) == docs(upstream)
    # as text, only the corpus header comments differ
    differing = [(a, b) for a, b in zip(golden.splitlines(), upstream.splitlines(), strict=True) if a != b]
    assert [a.split(":", 1)[0] for a, _ in differing] == ["# Source", "# Note"]
    assert validate_texts([("golden.yaml", out)], "1.37").valid
