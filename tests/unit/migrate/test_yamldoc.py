"""The round-trip layer: lossless split, per-document style, comment-preserving edits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubedra.sources.yamldoc import (
    Style,
    YamlFile,
    detect_style,
    minimal_dump,
    remove_empty,
    remove_key,
    split_chunks,
    to_ruamel,
)

LINES = st.sampled_from(
    [
        "---\n",
        "--- # doc\n",
        "# comment\n",
        "\n",
        "a: 1\n",
        "b:\n",
        "  - x\n",
        "  c: 'q'\n",
        "...\n",
        "text: |\n",
        "  ---not a separator\n",
        "no newline at end",
    ]
)


@given(st.lists(LINES, max_size=30))
def test_split_is_lossless(lines: list[str]) -> None:
    text = "".join(lines)
    assert "".join(c.original for c in split_chunks(text)) == text
    assert YamlFile(text, "f").render() == text


def test_split_keeps_preamble_and_trailing_comments_out_of_the_body() -> None:
    text = "# Source: x\n# note\n\napiVersion: v1\nkind: Pod\n# trailing\n---\n# second\nkind: B\n"
    chunks = split_chunks(text)
    assert [c.head for c in chunks] == ["# Source: x\n# note\n\n", "# second\n"]
    assert chunks[0].body == "apiVersion: v1\nkind: Pod\n"
    assert chunks[0].tail == "# trailing\n"
    assert chunks[0].line == 4
    assert chunks[1].line == 9


def test_detect_style() -> None:
    assert detect_style("a:\n- x\n- y\nb:\n  c: 1\n") == Style(2, 0)
    assert detect_style("a:\n  - x\n  - y\n") == Style(2, 2)
    assert detect_style("a:\n    b:\n        c: 1\n") == Style(4, 0)
    assert detect_style("spec:\n  containers:\n    - name: a\n      args:\n        - x\n") == Style(2, 2)


def test_edit_keeps_comments_quotes_and_block_scalars() -> None:
    text = (
        "# head\n"
        "kind: Pod  # eol\n"
        "spec:\n"
        "  containers:\n"
        "    - name: 'a'\n"
        '      args: ["x", "y"]\n'
        "      script: |\n"
        "        echo hi\n"
        "      resources:\n"
        "        limits:\n"
        "          nvidia.com/gpu: 1  # gone with its line\n"
        "          # about memory\n"
        "          memory: 1Gi\n"
    )
    f = YamlFile(text, "f")
    chunk = f.chunks[0]
    data = f.load(chunk)
    limits = data["spec"]["containers"][0]["resources"]["limits"]
    remove_key(limits, "nvidia.com/gpu")
    chunk.dirty = True
    out = f.render()
    assert "# head\n" in out
    assert "# eol" in out
    assert "# about memory" in out
    # the removed line's own comment stays, as a full-line comment in its place
    assert "\n          # gone with its line\n          # about memory\n" in out
    assert "name: 'a'" in out
    assert 'args: ["x", "y"]' in out
    assert "script: |\n        echo hi\n" in out
    assert out.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    "scalar",
    [
        '"a long quoted string that spans\n    two lines in the source"',
        "'single quoted, folded\n    over two lines'",
        "plain words folded\n    over two lines",
    ],
)
def test_scalars_folded_over_lines_are_kept_as_written(scalar: str) -> None:
    """ruamel joins a scalar the source folded over several lines; migrate puts the original lines back when
    the document still parses to the same data."""
    text = (
        f"kind: Pod\nmetadata:\n  note: {scalar}\nspec:\n  limits:\n    nvidia.com/gpu: 1\n    memory: 1Gi\n"
    )
    f = YamlFile(text, "f")
    data = f.load(f.chunks[0])
    remove_key(data["spec"]["limits"], "nvidia.com/gpu")
    f.chunks[0].dirty = True
    out = f.render()
    assert f"  note: {scalar}\n" in out
    assert out == text.replace("    nvidia.com/gpu: 1\n", "")


def test_remove_key_carries_following_comment_lines_to_the_previous_key() -> None:
    f = YamlFile("a:\n  x: 1\n  gpu: 2\n  # about y\n  y: 3\n", "f")
    data = f.load(f.chunks[0])
    remove_key(data["a"], "gpu")
    f.chunks[0].dirty = True
    assert f.render() == "a:\n  x: 1\n  # about y\n  y: 3\n"


def test_remove_first_key_keeps_comment_lines_before_the_next() -> None:
    f = YamlFile("a:\n  gpu: 2\n  # about y\n  y: 3\n", "f")
    data = f.load(f.chunks[0])
    remove_key(data["a"], "gpu")
    f.chunks[0].dirty = True
    assert f.render() == "a:\n  # about y\n  y: 3\n"


def test_remove_empty_removes_only_empty_collections() -> None:
    f = YamlFile("a:\n  limits: {}\n  keep: {x: 1}\n", "f")
    data = f.load(f.chunks[0])
    remove_empty(data["a"], "limits")
    remove_empty(data["a"], "keep")
    assert list(data["a"]) == ["keep"]


def test_minimal_dump_keeps_mixed_sequence_styles() -> None:
    # two dash offsets in one document: ruamel would re-indent one of them, the restore keeps both
    text = "spec:\n  containers:\n    - name: a\n      args:\n      - x\n      - y\n"
    f = YamlFile(text, "f")
    data = f.load(f.chunks[0])
    data["spec"]["containers"][0]["new"] = to_ruamel({"k": "v"})
    out = minimal_dump(text, data, f.chunks[0].style)
    assert out == text + "      new:\n        k: v\n"


def test_insert_before_first_document_moves_the_preamble_up() -> None:
    text = "# Source: here\napiVersion: v1\nkind: Pod\n"
    f = YamlFile(text, "f")
    f.insert_before(f.chunks[0], to_ruamel({"kind": "New"}))
    assert f.render() == "# Source: here\nkind: New\n---\napiVersion: v1\nkind: Pod\n"
