"""YAML 1.1 words (``y``, ``no``, ``on``...) in migrate: the rewrite keeps their text, and the
output's validation reads them as kubectl does (booleans), so a request named ``y`` is a manual item."""

from __future__ import annotations

from kubedra.migrate.engine import attach_validation
from kubedra.validate.engine import validate_texts

from .helpers import migrate_text

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train
  labels:
    on: "x"
  annotations:
    enabled: yes
spec:
  containers:
  - name: y
    image: cuda
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def test_rewrite_keeps_the_words_as_written() -> None:
    report = migrate_text(POD)
    out = report.files[0].output
    assert '    on: "x"\n' in out
    assert "    enabled: yes\n" in out
    assert "  - name: y\n" in out
    assert "resourceClaims" in out


def test_validation_of_the_output_sees_booleans_like_kubectl() -> None:
    report = migrate_text(POD.replace("    enabled: yes\n", "    enabled: 'yes'\n"))
    attach_validation(report, validate_texts)
    manual = [f.message for f in report.manual]
    assert any("containers[0].name" in m and "boolean" in m for m in manual), manual
