"""OPT's positions (TorchScript): the attention mask's cumulative sum sliced from the past on,
total - min(past, total) rows, added to the seq token embeddings; the sum, and the attention's
output after another broadcast against seq, are reshaped to [batch, that length, -1]. Where
the length is 0 (a mask no longer than the past) the copied dim is 0 too, and a -1 beside a
product of 0 fails in onnxruntime, and so does unflattening the empty (batch*length, 8) to
[batch, that length (copying 8), 8]: the length is at least 1 there, and both resolve.
(The domain said the model ran with the mask no longer than the past: onnxruntime fails.)"""

import itertools

import numpy as np
from helpers import I64, F, init, model
from onnx import helper

import onnxsym


def _positions_reshape():
    n = helper.make_node
    nodes = [n("Shape", ["past_key"], ["pv"], start=2, end=3),
             n("CumSum", ["mask", "one"], ["cs"]), n("Sub", ["cs", "one"], ["pos"]),
             n("Slice", ["pos", "pv", "big", "one_axis"], ["pos_new"]),
             n("Gather", ["table", "pos_new"], ["pe"]),  # (batch, total - min(past, total), 8)
             n("Add", ["x", "pe"], ["h"]), n("Add", ["h", "x"], ["h2"]),
             n("Shape", ["h"], ["hs"], start=0, end=2), n("Concat", ["hs", "minus_one"], ["target"], axis=0),
             n("Reshape", ["h2", "target"], ["y"], name="the_reshape"),
             # flattened to (batch*length, 8) and back to [batch, length, 8] (OPT's layers)
             n("Reshape", ["h", "flat"], ["f"]), n("Concat", ["hs", "eight"], ["back"], axis=0),
             n("Reshape", ["f", "back"], ["y2"], name="the_unflatten")]
    inits = [init("one", np.array(1)), init("one_axis", np.array([1])), init("big", np.array([1 << 62])),
             init("table", np.zeros((64, 8), np.float32)), init("minus_one", np.array([-1])),
             init("flat", np.array([-1, 8])), init("eight", np.array([8]))]
    inputs = [("x", F, ["batch", "seq", 8]), ("mask", I64, ["batch", "total"]), ("past_key", F, ["batch", 2, "past", 4])]
    return model(nodes, inputs, ["y", "y2"], inits)


def test_the_reshaped_length_is_at_least_1_and_resolved():
    import onnxruntime as ort

    m = _positions_reshape()
    res = onnxsym.infer(m)
    assert not res.unresolved(), [(u.value, u.axis) for u in res.unresolved()]
    domain = res.domain()
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    ran = 0
    for b, s, p, t in itertools.product((1, 2), (1, 2, 3), (1, 2, 4), range(1, 9)):
        sizes = {"batch": b, "seq": s, "past": p, "total": t}
        feeds = {"x": np.zeros((b, s, 8), np.float32), "mask": np.ones((b, t), np.int64),
                 "past_key": np.zeros((b, 2, p, 4), np.float32)}
        try:
            shapes = [o.shape for o in sess.run(None, feeds)]
        except Exception:
            shapes = None
        inside = domain.violated(sizes) is None
        assert (shapes is not None) == inside, (sizes, shapes, [c.text for c in domain.conditions])
        if inside:
            ran += 1
            assert shapes == [tuple(onnxsym.dims.evaluate(d, sizes) for d in res.shape(v)) for v in ("y", "y2")], sizes
    assert ran > 10


def _framing_reshape():
    """x [B, T] cut to 16 * (T // 16) samples and reshaped to [B, T // 16, 16]: an audio
    front-end's framing. The count is 0 for T < 16, where its 0 copies the input's dim
    16 * 0 = 0: the same dim either way."""
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["s"], start=1, end=2), n("Shape", ["x"], ["b"], start=0, end=1),
             n("Div", ["s", "hop"], ["nf"]), n("Mul", ["nf", "hop"], ["keep"]),
             n("Slice", ["x", "zero", "keep", "one"], ["y"]),
             n("Concat", ["b", "nf", "hop"], ["target"], axis=0), n("Reshape", ["y", "target"], ["frames"])]
    inits = [init("hop", np.array([16])), init("zero", np.array([0])), init("one", np.array([1]))]
    return model(nodes, [("x", F, ["B", "T"])], ["frames"], inits)


def test_a_framing_reshape_whose_count_may_be_0():
    from oracle import check

    cases = [({"B": b, "T": t}, {"x": np.zeros((b, t), np.float32)}) for b, t in ((1, 0), (2, 15), (1, 16), (3, 47))]
    res = check(_framing_reshape(), cases)
    assert [str(d) for d in res.shape("frames")] == ["B", "T//16", "16"]
