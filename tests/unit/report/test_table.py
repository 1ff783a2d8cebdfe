"""kubedra.report.table, the one human table: kubectl columns in a pipe, wrapping (never cutting) on a terminal."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.report.table import paragraph, render

HEADERS = ["where", "severity", "rule", "message"]
LOC = "tests/corpus/legacy-gpu/device-plugin-testdata-job.yaml:22"
MESSAGE = "container cuda-container requests nvidia.com/gpu: 1 (pod template at spec.template.spec)"
ROWS = [[LOC, "warning", "gpu.device-plugin-request", MESSAGE], ["d.yaml:3", "error", "api.removed", "short"]]


def test_a_pipe_gets_kubectl_columns_one_line_per_row() -> None:
    assert render(["name", "value"], [["a", "1"], ["long-name", None]]) == (
        "NAME        VALUE\na           1\nlong-name\n"
    )
    text = render(HEADERS, ROWS)
    assert len(text.splitlines()) == 3
    assert MESSAGE in text
    assert "…" not in text


def test_a_pipe_folds_a_multiline_cell_into_its_row() -> None:
    cel = 'compile error: <input>:2:42\n | device.capacity["x"].memory >= quantity("1Gi")\n | ....^'
    lines = render(["pod", "reason"], [["p", cel], ["q", "ok"]]).splitlines()
    assert len(lines) == 3
    assert (
        lines[1]
        == 'p     compile error: <input>:2:42 | device.capacity["x"].memory >= quantity("1Gi") | ....^'
    )


def test_a_wide_terminal_gets_the_same_columns() -> None:
    assert render(HEADERS, ROWS, width=200) == render(HEADERS, ROWS)


def test_the_message_wraps_inside_its_column() -> None:
    lines = render(HEADERS, ROWS, width=150).splitlines()
    column = lines[0].index("MESSAGE")
    assert lines[1].startswith(LOC)
    assert all(len(line) <= 150 for line in lines)
    assert len(lines) == 4
    assert lines[2][:column].strip() == ""
    assert lines[2][column] != " "
    assert " ".join(w for line in lines[1:3] for w in line[column:].split()) == MESSAGE  # whole


def test_too_little_room_for_the_message_puts_it_under_the_row() -> None:
    lines = render(HEADERS, ROWS, width=105).splitlines()
    assert lines[0].split() == ["WHERE", "SEVERITY", "RULE"]
    assert lines[1] == "    MESSAGE"
    assert lines[2].split() == [LOC, "warning", "gpu.device-plugin-request"]
    assert lines[3].startswith("    container")
    assert all(len(line) <= 105 for line in lines)


def test_a_narrow_terminal_gets_blocks_with_the_location_whole() -> None:
    lines = render(HEADERS, ROWS, width=40).splitlines()
    assert lines[:3] == ["WHERE", "  SEVERITY   RULE", "    MESSAGE"]
    assert lines[3] == LOC  # wider than 40: one unbreakable token, never cut
    assert lines[4].split() == ["warning", "gpu.device-plugin-request"]
    assert lines[4].startswith("  w")
    assert all(line.startswith("    ") and len(line) <= 40 for line in lines[5:8])
    assert lines[-3:] == ["d.yaml:3", "  error      api.removed", "    short"]


def test_a_multiline_cell_keeps_its_row_on_a_terminal() -> None:
    lines = render(["pod", "reason"], [["p", "first\n | second"], ["q", "ok"]], width=80).splitlines()
    assert lines == ["POD   REASON", "p     first", "       | second", "q     ok"]


def test_a_second_text_column_says_what_it_is_under_the_row() -> None:
    rows = [[LOC, "warning", MESSAGE, "rewrite it to a claim"]]
    lines = render(["where", "severity", "message", "fix"], rows, width=75, flex=(2, 3)).splitlines()
    assert lines[-1] == "    fix: rewrite it to a claim"


def test_control_characters_never_reach_the_terminal() -> None:
    text = render(["name"], [["evil\x1b[2J\x07name"]], width=80)
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "evil\\x1b[2J\\x07name" in text


def test_prose_wraps_with_a_hanging_indent_and_is_left_alone_in_a_pipe() -> None:
    note = "- gangs are placed all-or-nothing; kube-scheduler does that only with feature gates"
    assert paragraph(note, None) == note
    assert paragraph(note, 40, "  ").splitlines() == [
        "- gangs are placed all-or-nothing;",
        "  kube-scheduler does that only with",
        "  feature gates",
    ]


WORD = st.text(alphabet="abcdefghij-./:0123456789", min_size=1, max_size=30)
CELL = st.lists(WORD, min_size=0, max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(
    columns=st.integers(min_value=1, max_value=5),
    rows=st.lists(st.lists(CELL, min_size=5, max_size=5), min_size=1, max_size=5),
    width=st.integers(min_value=20, max_value=220),
    flex=st.sets(st.integers(min_value=0, max_value=4)),
)
def test_nothing_is_ever_cut_and_only_a_lone_word_overflows(
    columns: int, rows: list[list[str]], width: int, flex: set[int]
) -> None:
    headers = ["where", "severity", "rule", "object", "message"][:columns]
    rows = [r[:columns] for r in rows]
    text = render(headers, rows, width=width, flex=flex)
    labels = [f"{headers[c]}:" for c in sorted(flex)[1:] if 0 < c < columns]  # "fix:" under a row
    words = Counter(text.split())
    for label in labels:  # a label says which text follows; it is not part of a cell
        words[label] = max(words[label] - sum(1 for r in rows if r[headers.index(label[:-1])].strip()), 0)
    expected = Counter(w for h in headers for w in h.upper().split()) + Counter(
        w for row in rows for cell in row for w in cell.split()
    )
    assert +words == expected  # every word once, none cut, none added
    for line in text.splitlines():
        assert len(line) <= width or len(line.split()) == 1, (width, line)
