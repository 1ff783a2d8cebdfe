"""YAML alias bombs and other documents too large to hold are refused quickly, as kubectl's go-yaml refuses
them: one InputError naming file:line, in every reader (bulk loader and migrate's rewrite path)."""

from __future__ import annotations

import time

import pytest
import yaml

from kubedra.errors import InputError
from kubedra.migrate.engine import load_sources
from kubedra.sources import files, reading, yamlbounds


def bomb(levels: int, width: int = 9) -> str:
    """The billion-laughs shape: each anchor is a list of ``width`` aliases of the previous one."""
    lines = ['  a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n" + "\n".join(lines) + "\n"


def test_allowed_alias_ratio_is_go_yamls() -> None:
    # gopkg.in/yaml.v2 v2.4.0 decode.go allowedAliasRatio
    assert yamlbounds.allowed_alias_ratio(1000) == 0.99
    assert yamlbounds.allowed_alias_ratio(400_000) == 0.99
    assert yamlbounds.allowed_alias_ratio(4_000_000) == 0.10
    assert yamlbounds.allowed_alias_ratio(2_200_000) == pytest.approx(0.545)


@pytest.mark.parametrize("levels", [4, 10, 30])
def test_bomb_refused_fast_with_file_and_line(levels: int) -> None:
    text = bomb(levels)
    assert len(text) < 2000
    start = time.perf_counter()
    result = files.parse_text(text, "bomb.yaml")
    elapsed = time.perf_counter() - start
    assert elapsed < 0.2
    assert not result.documents
    [err] = result.errors
    assert "excessive aliasing" in str(err)
    assert str(err).startswith("bomb.yaml:")
    assert "\n" not in str(err)


def test_strict_load_raises(tmp_path) -> None:
    p = tmp_path / "bomb.yaml"
    p.write_text(bomb(10))
    with pytest.raises(InputError, match="excessive aliasing"):
        files.load([str(p)])


def test_migrate_rewrite_path_refuses_before_ruamel(tmp_path) -> None:
    p = tmp_path / "bomb.yaml"
    # mention a GPU so migrate would load the document with ruamel and walk it
    p.write_text(bomb(12).replace("kind: ConfigMap", "kind: ConfigMap # nvidia.com/gpu"))
    start = time.perf_counter()
    with pytest.raises(InputError, match="excessive aliasing"):
        load_sources([str(p)])
    assert time.perf_counter() - start < 0.5


def test_small_alias_use_is_fine() -> None:
    # kubectl accepts moderate anchor reuse (ratio under 99% below 400,000 nodes)
    text = "kind: X\nbase: &b {a: 1, b: 2}\n" + "".join(f"k{i}: *b\n" for i in range(200))
    result = files.parse_text(text, "ok.yaml")
    assert not result.errors
    assert result.documents[0].obj["k199"] == {"a": 1, "b": 2}


def test_check_node_counts_like_go_yaml() -> None:
    node = yaml.compose("a: &x [1, 2]\nb: *x\n", Loader=yaml.SafeLoader)
    assert node is not None
    # document mapping 1 + keys 2 + seq 1 + items 2 + alias 1 + expanded seq 3 = 10
    assert yamlbounds.check_node(node) == 10


def test_recursive_alias_refused() -> None:
    result = files.parse_text("a: &x\n  b: *x\n", "rec.yaml")
    [err] = result.errors
    assert "contains itself" in str(err)


@pytest.mark.parametrize("flow", [True, False])
def test_deep_nesting_is_one_line_error(flow: bool) -> None:
    depth = yamlbounds.MAX_DEPTH + 5
    text = (
        "a: " + "[" * depth + "]" * depth + "\n" if flow else "".join(" " * i + "a:\n" for i in range(depth))
    )
    [err] = files.parse_text(text, "deep.yaml").errors
    assert "nesting" in str(err)


def test_deep_json_is_one_line_error() -> None:
    depth = 5000
    [err] = files.parse_text("[" * depth + "]" * depth, "deep.json").errors
    assert "nesting deeper" in str(err)


def test_huge_integers_do_not_crash() -> None:
    # Python's int() refuses 4,300+ digits; go-yaml makes a float of what overflows int64, or keeps the text
    digits = "7" * 5000
    doc = files.parse_text(f"kind: X\nbig: {digits}\nm: 123456789012345678901234\n", "big.yaml").documents[0]
    assert doc.obj["big"] == digits
    assert doc.obj["m"] == 1.2345678901234568e23
    assert files.parse_text('{"n": ' + digits + "}", "big.json").errors == []


def test_file_size_is_bounded(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 1000)
    p = tmp_path / "big.yaml"
    p.write_text("kind: X\n" + "a: b\n" * 500)
    with pytest.raises(InputError, match="larger than"):
        files.load([str(p)])
