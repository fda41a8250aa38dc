"""What tests/data_attack.py checks (random index-op models, the indices a constant, a size or
a graph input, alone or in an If's branch), held to onnxruntime: a fast slice of one model per
source and branch, and every op, source and branch in the slow tier."""

import itertools
import random

import pytest
from data_attack import OPS, SOURCES, judge, random_model

pytest.importorskip("onnxruntime")

FAST = [("Gather0", "constant", False), ("GatherND", "size", False), ("ScatterElements0", "fed", False),
        ("Gather1", "constant", True), ("GatherElements1", "size", True), ("ScatterND", "fed", True)]


@pytest.mark.parametrize("op, source, branch", FAST)
def test_the_data_attack_finds_nothing(op, source, branch):
    m, *_, fed = random_model(random.Random(7), op, source, branch)
    assert judge(m, source, branch, fed) == []


@pytest.mark.slow
@pytest.mark.parametrize("op, source, branch", list(itertools.product(OPS, SOURCES, (False, True))))
def test_the_data_attack_finds_nothing_on_any_op(op, source, branch):
    for seed in range(3):
        m, *_, fed = random_model(random.Random(seed), op, source, branch)
        assert judge(m, source, branch, fed) == [], seed
