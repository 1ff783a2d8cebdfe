"""Static MIG layouts: mig-parted names, explicit lists, and the 8-slot memory geometry."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.errors import InputError
from kubedra.vendors.nvidia import dra, models, modes
from kubedra.vendors.nvidia import layouts as nvidia_layouts
from kubedra.vendors.nvidia.layouts import overlaps

H100 = models.get_model("H100-80GB")
A100_40 = models.get_model("A100-40GB")
MIG_MODELS = [m for m in models.gpu_models().values() if m.mig_capable]


def layout(text, model=H100, gpus=1):
    return modes.parse_gpu_mode(f"mig-static:{text}").gpu_layouts(model, gpus)


def placed(text, model=H100):
    (one,) = layout(text, model)
    return [(p.profile.name, p.start) for p in one]


def test_all_1g_fills_starts_0_to_6():
    assert placed("all-1g.10gb") == [("1g.10gb", s) for s in range(7)]


def test_all_profile_uses_the_boards_own_profile_and_max_count():
    # mig-parted's all-1g.10gb on an A100-40GB is four of that board's 2-slice 1g.10gb
    assert placed("all-1g.10gb", A100_40) == [("1g.10gb", s) for s in (0, 2, 4, 6)]
    assert placed("all-3g.40gb") == [("3g.40gb", 0), ("3g.40gb", 4)]
    assert placed("all-7g.80gb") == [("7g.80gb", 0)]


def test_all_balanced_places_largest_first_at_the_highest_start():
    # mig-parted creates 3g, 2g, 1g, 1g; NVML takes the highest free start for each
    assert placed("all-balanced") == [("1g.10gb", 0), ("1g.10gb", 1), ("2g.20gb", 2), ("3g.40gb", 4)]
    assert [n for n, _ in placed("all-balanced", A100_40)] == ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"]


def test_all_disabled_and_all_enabled():
    assert layout("all-disabled", gpus=2) == [None, None]
    assert layout("all-enabled", gpus=2) == [(), ()]


def test_explicit_lists():
    assert placed("1g.10gb*7") == placed("all-1g.10gb")
    assert placed("3g.40gb,2g.20gb,1g.10gb") == [("1g.10gb", 1), ("2g.20gb", 2), ("3g.40gb", 4)]
    assert placed("4g.40gb,3g.40gb") == [("4g.40gb", 0), ("3g.40gb", 4)]
    assert placed("1g.20gb*4") == [("1g.20gb", s) for s in (0, 2, 4, 6)]


def test_mig_parted_dot_spelling_of_plus_attributes():
    assert placed("1g.10gb.me,3g.40gb") == [("1g.10gb+me", 3), ("3g.40gb", 4)]


def test_pinned_starts():
    assert placed("3g.40gb@0,2g.20gb,1g.10gb") == [("3g.40gb", 0), ("2g.20gb", 4), ("1g.10gb", 6)]


def test_a_layout_that_needs_a_second_creation_order():
    # 1g.20gb must take slots 6-7; the 1-slice instances fill 0-5
    assert placed("1g.10gb*6,1g.20gb") == [("1g.10gb", s) for s in range(6)] + [("1g.20gb", 6)]


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("3g.40gb,3g.40gb,1g.10gb", "needs 9 memory slices"),
        ("3g.40gb*3", "3 x 3g.40gb exceeds its maximum of 2"),
        ("1g.10gb*8", "8 x 1g.10gb exceeds its maximum of 7"),
        ("1g.10gb+me*2", "2 x 1g.10gb+me exceeds its maximum of 1"),
        ("7g.80gb,1g.10gb", "needs 9 memory slices"),
        ("4g.40gb,4g.40gb", "exceeds its maximum of 1"),
        ("3g.40gb@0,4g.40gb", "cannot be placed without overlapping"),
        ("3g.40gb@0,2g.20gb,1g.10gb*2", "cannot be placed without overlapping"),
        ("1g.10gb*7,1g.10gb+me", "cannot be placed without overlapping"),
        ("2g.20gb,1g.10gb*6", "cannot be placed without overlapping"),
        ("1g.20gb@1", "1g.20gb cannot start at memory slice 1 (valid starts: 0, 2, 4, 6)"),
        ("2g.20gb@6", "valid starts: 0, 2, 4"),
        ("2g.20gb@4,1g.20gb@4", "overlaps another instance on memory slice 4"),
        ("5g.50gb", "unknown MIG profile '5g.50gb' for H100-80GB"),
        ("1g.5gb", "unknown MIG profile '1g.5gb' for H100-80GB (known: 1g.10gb, 1g.10gb+me"),
    ],
)
def test_impossible_layouts(text, msg):
    with pytest.raises(InputError, match=re.escape(msg)):
        layout(text)


def test_two_3g_fill_all_eight_slots():
    (one,) = layout("3g.40gb*2")
    assert sorted(s for p in one for s in p.slots) == list(range(8))


def test_per_gpu_blocks():
    layouts = layout("all-balanced/all-disabled", gpus=8)
    assert [lay is None for lay in layouts] == [False] * 4 + [True] * 4
    with pytest.raises(InputError, match="3 per-GPU MIG layouts do not divide 8 GPUs"):
        layout("all-balanced/all-disabled/all-1g.10gb", gpus=8)


def test_mig_layout_on_a_non_mig_board():
    with pytest.raises(InputError, match="does not support MIG"):
        layout("1g.10gb", models.get_model("T4"))
    assert layout("all-disabled", models.get_model("T4")) == [None]


# ----------------------------------------------------------------- properties


def _feasible(wants):
    """Brute force: can these (profile, pinned start or None) instances coexist on one GPU?"""
    options = [[s] if s is not None else list(p.starts) for p, s in wants]
    if sum(p.size for p, _ in wants) > 8:
        return False

    def rec(i, used):
        if i == len(wants):
            return True
        p = wants[i][0]
        for s in options[i]:
            slots = set(range(s, s + p.size))
            if s in p.starts and not (slots & used) and rec(i + 1, used | slots):
                return True
        return False

    return rec(0, frozenset())


@st.composite
def requests(draw):
    model = draw(st.sampled_from(MIG_MODELS))
    n = draw(st.integers(0, 8))
    wants = []
    for _ in range(n):
        p = draw(st.sampled_from(model.mig_profiles))
        start = draw(st.one_of(st.none(), st.integers(0, 7))) if draw(st.booleans()) else None
        wants.append((p, start))
    return model, wants


@settings(max_examples=400, deadline=None)
@given(requests())
def test_placement_never_overlaps_and_is_complete(req):
    model, wants = req
    counts: dict[str, int] = {}
    for p, _ in wants:
        counts[p.name] = counts.get(p.name, 0) + 1
    within_max = all(counts.get(p.name, 0) <= p.max_count for p in model.mig_profiles)
    try:
        result = nvidia_layouts.place(model, wants)
    except InputError:
        # refused only if the layout is truly impossible (or breaks a max count)
        assert not (within_max and _feasible(wants))
        return
    assert within_max
    assert _feasible(wants)
    assert not overlaps(result)
    assert len(result) == len(wants)
    for mp in result:
        assert mp.start in mp.profile.starts
        assert max(mp.slots) < 8
    pinned = sorted((p.name, s) for p, s in wants if s is not None)
    got = sorted((mp.profile.name, mp.start) for mp in result)
    assert all(x in got for x in pinned)
    assert sorted(p.name for p, _ in wants) == sorted(mp.profile.name for mp in result)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(MIG_MODELS),
    st.lists(st.tuples(st.integers(0, 6), st.integers(1, 3)), min_size=1, max_size=4),
)
def test_random_valid_static_layouts_publish_disjoint_memory_slices(model, picks):
    # build a layout text from random profiles/counts; whatever is accepted must publish
    # MIG devices whose memorySlice capacities never collide on a GPU
    items = [f"{model.mig_profiles[i].name}*{n}" for i, n in picks]
    text = ",".join(items)
    try:
        slices = dra.dra_objects("n", model, 2, f"mig-static:{text}")
    except InputError:
        return
    for minor in (0, 1):
        seen = []
        for d in slices[0]["spec"].get("devices", []):
            if d["name"].startswith(f"gpu-{minor}-mig-"):
                seen += [k for k in d["capacity"] if k.startswith("memorySlice")]
        assert len(seen) == len(set(seen))
        assert seen  # a layout that was accepted has devices


def test_brute_force_helper_is_sound():
    # the oracle itself: two 3g fit, a third instance does not; 4g only at 0
    g3 = H100.profile("3g.40gb")
    g4 = H100.profile("4g.40gb")
    g1 = H100.profile("1g.10gb")
    assert _feasible([(g3, None), (g3, None)])
    assert not _feasible([(g3, None), (g3, None), (g1, None)])
    assert not _feasible([(g4, 4)])
    g1_20 = H100.profile("1g.20gb")
    assert _feasible([(g1, 6), (g1_20, None)])
    assert not _feasible([(g1, 6), (g1_20, 6)])
