"""A fast slice of tests/corner_attack.py (sequence positions and joins of splits, Scan 8 with and
without sequence_lens, Scans under an If the sizes decide), held to onnxruntime: no wrong dim, no
size refused that onnxruntime runs, no size allowed that it refuses unless a not-stated line names
the node it refuses at. What the fuller runs found is in docs/testing.md."""

from __future__ import annotations

import pytest

pytest.importorskip("onnxruntime")


def test_a_fast_slice_of_the_corner_attack_finds_nothing():
    from corner_attack import run

    tally = run(10, 36)
    assert tally["wrong"] == 0 and tally["too_narrow"] == 0 and tally["too_wide"] == 0, tally
    assert tally["agrees"] >= 3 and tally["tries"] >= 60, tally


@pytest.mark.slow
def test_the_corner_attack_finds_nothing():
    from corner_attack import run

    tally = run(200, 1)
    assert tally["wrong"] == 0 and tally["too_narrow"] == 0 and tally["too_wide"] == 0, tally
