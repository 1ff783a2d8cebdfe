"""A DeviceClass whose CEL selector does not compile is bad input: allocate and explain exit 2 with one line
naming the class and the expression. From a live cluster it stays the explanation."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubedra.testing.cli import run

DATA = Path(__file__).parents[2] / "data" / "allocate"


@pytest.fixture
def bad_class(tmp_path: Path) -> Path:
    text = (DATA / "two-nodes.yaml").read_text()
    head = "metadata:\n  name: gpu.example.com\n---"
    assert head in text
    f = tmp_path / "in.yaml"
    f.write_text(
        text.replace(
            head, head[:-3] + "spec:\n  selectors:\n  - cel: {expression: 'device.driver == '}\n---", 1
        )
    )
    return f


@pytest.mark.parametrize(
    "args", [("allocate",), ("allocate", "-o", "json"), ("explain", "--claim", "team-b/two-gpus")]
)
def test_class_cel_compile_error_is_exit_2_on_one_line(bad_class: Path, args: tuple[str, ...]) -> None:
    res = run(args[0], "-f", str(bad_class), *args[1:])
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1, res.stderr
    assert "DeviceClass gpu.example.com: spec.selectors[0].cel.expression 'device.driver == '" in res.stderr
    assert "Syntax error" in res.stderr


def test_a_good_class_still_allocates() -> None:
    assert run("allocate", "-f", str(DATA / "two-nodes.yaml")).exit_code == 0
