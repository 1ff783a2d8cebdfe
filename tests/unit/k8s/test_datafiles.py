"""kubedra.k8s.datafiles reads every bundled data file as PyYAML's pure-Python safe loader does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubedra.k8s import datafiles

DATA = Path(datafiles.__file__).resolve().parent.parent / "data"
FILES = sorted(p.relative_to(DATA).as_posix() for p in DATA.rglob("*.yaml"))


def test_the_data_folder_is_found() -> None:
    assert "versions.yaml" in FILES
    assert "feature-gates.yaml" in FILES


@pytest.mark.parametrize("name", FILES)
def test_same_objects_as_the_safe_loader(name: str) -> None:
    text = (DATA / name).read_text(encoding="utf-8")
    docs = list(yaml.safe_load_all(text))
    if len(docs) == 1:
        assert datafiles.load(name) == docs[0]
    else:  # the policy bundles (read by their own loader): datafiles.load refuses a stream, as safe_load does
        with pytest.raises(yaml.YAMLError, match="expected a single document"):
            datafiles.load(name)


def test_a_missing_file_is_an_error() -> None:
    with pytest.raises(FileNotFoundError):
        datafiles.read_text("no-such-file.yaml")
