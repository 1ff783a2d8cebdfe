"""The GPU memory rows of the two columns count a whole GPU alike, or a note says why they do not.

With DynamicMIG the NVIDIA DRA driver publishes a full GPU's ``memory`` as its largest MIG profile's (H100 80GB:
81,152 MiB, 7g.80gb), while the device plugin counts the GPU's total (81,559 MiB): the README's
``--gpu-mode mig-dynamic`` command showed 1,354 vs 1,347 GiB for the same 17 whole GPUs, unexplained.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kubedra.cli import cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "legacy-gpu"


def _simulate(*args: str) -> str:
    r = CliRunner().invoke(cli, ["simulate", str(EXAMPLES), *args], catch_exceptions=False)
    assert r.exit_code == 2, r.output  # the README's exit code: 3 objects not simulated
    return r.stdout


def _row(out: str, label: str) -> list[str]:
    line = next(x for x in out.splitlines() if x.startswith(label))
    return [c for c in line[len(label) :].split("  ") if c.strip()]


def test_mig_dynamic_memory_difference_is_explained():
    out = _simulate("--nodes", "4x8xH100-80GB", "--gpu-mode", "mig-dynamic", "--dra-sizing", "mig")
    assert "17 x whole GPU   17 x whole GPU" in out
    dp, dra = (c.strip() for c in _row(out, "GPU memory allocated"))
    assert (dp, dra) == ("1,354 GiB", "1,347 GiB")  # 17 x 81,559 MiB and 17 x 81,152 MiB
    assert (
        "a whole GPU's memory is not the same number in the two columns (4 nodes: 81,559 MiB with the device "
        "plugin, 81,152 MiB with DRA)"
    ) in out
    assert "largest MIG profile's" in out


def test_no_note_when_a_whole_gpu_counts_the_same():
    out = _simulate("--nodes", "2x8xH100-80GB")
    dp, dra = (c.strip() for c in _row(out, "GPU memory allocated"))
    assert dp == dra
    assert "not the same number in the two columns" not in out
