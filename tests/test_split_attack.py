"""A fast slice of tests/split_attack.py (graphs of one to three Ifs and Squeezes whose rank the
sizes decide, often several on one symbol), held to onnxruntime: no size allowed that it refuses,
none refused that it runs, no wrong dim, the annotated model loading and computing the original's
outputs, and a model called a contradiction running at no size. Before splits that each way
refuse were a contradiction, 98 of 11,800 sizes on seeds 0-299 were allowed that onnxruntime
refuses, and 4 written models were refused at load (a Transpose after a Squeeze that common
subexpression elimination merges with another)."""

from __future__ import annotations

import pytest

pytest.importorskip("onnxruntime")


def test_a_fast_slice_of_the_split_attack_finds_nothing():
    from split_attack import run

    tally = run(60, 0)
    assert tally["wrong"] == 0 and tally["too_narrow"] == 0 and tally["too_wide"] == 0, tally
    assert tally["contradictions"] >= 1 and tally["decided"] >= 20 and tally["tries"] >= 1500, tally


@pytest.mark.slow
def test_the_split_attack_finds_nothing():
    from split_attack import run

    tally = run(300, 1000)
    assert tally["wrong"] == 0 and tally["too_narrow"] == 0 and tally["too_wide"] == 0, tally
