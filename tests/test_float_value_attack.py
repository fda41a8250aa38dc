"""What tests/float_value_attack.py checks (``annotate --value n=V`` where n reaches shapes through
float arithmetic: Cast, Mul/Div/Add/Sub by a float constant, Floor/Ceil/Round, Cast back), held to
onnxruntime: the written model computes what the given one does for every n and size of x, and a
refusal by onnxsym (a contradiction at the value) is where onnxruntime refuses at that value."""

import random

import pytest
from float_value_attack import _runs_at_the_value, random_model
from value_attack import judge

pytest.importorskip("onnxruntime")


def _judged(seed, count):
    out = []
    for i in range(count):
        m, values, dynamic = random_model(random.Random(f"{seed}:{i}"))
        r = judge(m, values, dynamic)
        if r["verdict"].startswith("refused by onnxsym"):
            assert not _runs_at_the_value(m, values, dynamic), (i, r)
        else:
            assert r["verdict"] == "agrees", (i, r)
        out.append(r)
    return out


def test_the_float_value_attack_finds_nothing():
    rs = _judged(0, 40)
    assert sum(r.get("tries", 0) for r in rs) > 500  # (feeds compared: the check could fail)


@pytest.mark.slow
def test_the_float_value_attack_finds_nothing_on_a_fuller_run():
    _judged(1, 300)
