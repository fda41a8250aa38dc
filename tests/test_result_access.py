"""The library's first calls (issue 36): ``Result.shape`` and ``Result.shape_of`` (raises, with
"did you mean", and a type without None), ``Result.pins``, and a readable ``str`` and short
``repr`` for Result, Domain and UnresolvedDim."""

import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from cli_models import BERT, ROOT, nonzero_model, pinned_model

import onnxsym
from onnxsym import NoShapeError


@pytest.fixture(scope="module")
def bert():
    return onnxsym.infer(BERT)


def test_shape_of_gives_the_shape_onnxruntime_computes(bert):
    feeds = {i.name: np.ones((2, 5), np.int64) for i in onnx.load(BERT).graph.input}
    sess = ort.InferenceSession(BERT, providers=["CPUExecutionProvider"])
    for out, got in zip(sess.get_outputs(), sess.run(None, feeds)):
        shape = bert.shape_of(out.name)
        assert shape == bert.shape(out.name)
        assert tuple(onnxsym.evaluate(d, {"batch": 2, "seq": 5}) for d in shape) == got.shape


def test_shape_of_raises_with_did_you_mean_where_shape_gives_none(bert):
    assert bert.shape("last_hidden_stat") is None
    with pytest.raises(NoShapeError) as e:
        bert.shape_of("last_hidden_stat")
    assert isinstance(e.value, KeyError) and "did you mean 'last_hidden_state'?" in str(e.value)
    assert e.value.near[0] == "last_hidden_state"


def test_pins_are_part_of_the_result(tmp_path):
    m = pinned_model(tmp_path / "pin.onnx")
    r = onnxsym.infer(m)
    assert [(p.symbol, p.values, p.node) for p in r.pins] == [("batch", (1,), "rs")]
    assert onnxsym.infer(BERT).pins == []


def test_str_and_repr_are_readable_and_short(bert):
    text = repr(bert)
    assert len(text) < 200 and text.startswith("<Result") and "batch, seq" in text, text
    assert "input_ids: [batch, seq]" in str(bert) and "last_hidden_state: [batch, seq, 64]" in str(bert)
    d = bert.domain()
    # (seq <= 64 from the position table; the token ids, fed to a Gather, are data the domain
    # cannot promise: one line not stated. The type ids are a ConstantOfShape of 0, in range of
    # the type table at every size: no line)
    assert repr(d) == "<Domain over batch, seq: 1 conditions, 1 not stated>"
    assert str(d).splitlines()[0].startswith("seq <= 64") and "ranges:" in str(d)
    unresolved = onnxsym.infer(nonzero_model()).unresolved()
    assert unresolved and all(len(repr(u)) < 300 for u in unresolved)
    assert str(unresolved[0]).startswith("nz[1] = ") and "NonZero 'nz'" in str(unresolved[0])


def test_shape_of_type_checks_where_shape_needs_a_none_check(tmp_path):
    """What a user's mypy says: ``shape_of(x)[2]`` is fine; ``shape(x)[2]`` is Optional's error."""
    src = tmp_path / "use.py"
    src.write_text("import onnxsym\n\nr = onnxsym.infer('m.onnx')\n"
                   "a: onnxsym.Dim = r.shape_of('x')[2]\nb = r.shape('x')[2]\n")
    out = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", str(src)],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "MYPYPATH": ROOT})
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "use.py:5:" in errors[0] and "None" in errors[0], out.stdout
