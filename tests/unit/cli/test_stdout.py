"""stdout carries only the artefact asked for; the human report goes to stderr (or to stdout when there is
no artefact: ``--out DIR``, ``--in-place``). ``helm template x | kubedra migrate - | kubectl apply -f -``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from tests.unit.cli.helpers import ALLOCATE, CHART, GPU, run


def kubernetes_documents(text: str) -> list[dict]:
    """Parse like ``kubectl apply -f -``: every document is an object with apiVersion and kind."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    for d in docs:
        assert isinstance(d, dict), d
        assert d.get("apiVersion"), d
        assert d.get("kind"), d
    return docs


def test_helm_template_output_piped_through_migrate_is_kubernetes_yaml() -> None:
    r = run("migrate", "-", input=Path(CHART).read_text())
    assert r.exit_code == 0, r.stderr
    docs = kubernetes_documents(r.stdout)
    kinds = [d["kind"] for d in docs]
    assert kinds.count("ResourceClaimTemplate") == 2
    assert "Deployment" in kinds
    assert "Job" in kinds
    assert "nvidia.com/gpu" not in r.stdout
    # the change table and the summary went to stderr
    assert "CHANGE" in r.stderr
    assert "changed" in r.stderr
    assert "CHANGE" not in r.stdout


def test_migrate_stdin_with_manual_items_still_prints_only_yaml() -> None:
    fractional = (  # KAI's gpu-fraction has no DRA equivalent kubedra can decide: a manual item
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: f\n  annotations:\n    gpu-fraction: '0.5'\n"
        "spec:\n  containers: [{name: a, image: x}]\n"
    )
    r = run("migrate", "-", input=Path(GPU).read_text() + "---\n" + fractional)
    assert r.exit_code == 1
    kubernetes_documents(r.stdout)
    assert "MANUAL" in r.stderr
    assert "MANUAL" not in r.stdout


def test_migrate_diff_on_stdout_report_on_stderr(tmp_path: Path) -> None:
    r = run("migrate", GPU, code=0)
    assert r.stdout.startswith("--- a/")
    assert "+++ b/" in r.stdout
    assert "CHANGE" not in r.stdout
    assert "CHANGE" in r.stderr


def test_migrate_out_dir_has_no_artefact_so_the_table_is_on_stdout(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(GPU, src / "d.yaml")
    r = run("migrate", str(src), "--out", str(tmp_path / "out"))
    assert r.exit_code == 0, r.stderr
    assert "CHANGE" in r.stdout
    kubernetes_documents((tmp_path / "out" / "d.yaml").read_text())


def test_explain_notes_go_to_stderr(tmp_path: Path) -> None:
    r = run("explain", ALLOCATE, "--claim", "team-a/running", "-o", "json", code=0)
    assert "already allocated" in r.stderr
    json.loads(r.stdout)


def test_audit_table_colours_severity_on_a_terminal_unless_no_color(monkeypatch, capsys) -> None:
    from kubedra.report import audit as render
    from kubedra.report.table import print_table

    rows = [["f:1", "error", "r", "o", "m"], ["f:2", "info", "r", "o", "m"]]
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.delenv("NO_COLOR", raising=False)
    print_table(render.HEADERS[:5], rows, colours={1: render.SEVERITY_COLOURS})
    text = capsys.readouterr().out
    assert "\x1b[31" in text
    assert "\x1b[34" in text
    assert text.splitlines()[1].split()[0] == "f:1"  # the location stays first and plain
    monkeypatch.setenv("NO_COLOR", "1")
    print_table(render.HEADERS[:5], rows, colours={1: render.SEVERITY_COLOURS})
    assert "\x1b[" not in capsys.readouterr().out


def test_short_message_is_the_first_sentence() -> None:
    from kubedra.report.audit import short_message

    assert short_message("x is removed in 1.32. Use y instead.") == "x is removed in 1.32"
    assert short_message("one clause") == "one clause"
