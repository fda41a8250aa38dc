"""The domain against onnxruntime's run/refuse verdict, on the op patterns a third adversarial
round found: for each model, at every size of a grid around its conditions' boundaries, the
domain calls a size valid exactly where onnxruntime runs the model (and the grid holds both)."""


import numpy as np
import onnxruntime as ort
from helpers import I64, F, model
from onnx import helper, numpy_helper

n = helper.make_node


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def runs(m, feeds) -> bool:
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    try:
        ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"]).run(None, feeds)
        return True
    except Exception:
        return False


def ones(*shape, dtype=np.float32):
    return np.ones(shape, dtype)


def _pool(op, **kw):
    return model([n(op, ["x"], ["y"], **kw)], [("x", F, ["b", "c", "h", "w"])], [("y", F, None)])


def _einsum(equation, *shapes):
    names = [f"i{k}" for k in range(len(shapes))]
    return model([n("Einsum", names, ["y"], equation=equation)], list(zip(names, [F] * len(shapes), shapes)),
                 [("y", F, None)])


def _seq_at(position):
    return model([n("SplitToSequence", ["x"], ["s"], axis=0), n("SequenceAt", ["s", "i"], ["y"])],
                 [("x", F, ["a", 2])], [("y", F, None)], inits=[const("i", np.array(position, np.int64))])


def _seq_at_symbolic():
    """Three items at position k - 4 (k from a Shape): k in [1, 6]."""
    nodes = [n("SequenceConstruct", ["a", "a", "a"], ["s"]), n("Shape", ["z"], ["zs"]), n("Sub", ["zs", "four"], ["iv"]),
             n("Squeeze", ["iv", "ax"], ["i"]), n("SequenceAt", ["s", "i"], ["y"])]
    return model(nodes, [("a", F, [2]), ("z", F, ["k"])], [("y", F, None)],
                 inits=[const("four", np.array([4], np.int64)), const("ax", np.array([0], np.int64))])


def _conv_transpose(out, stride, k=3, dilation=1):
    return model([n("ConvTranspose", ["x", "w"], ["y"], output_shape=[out, out], strides=[stride, stride],
                    dilations=[dilation, dilation])],
                 [("x", F, ["b", 2, "h", "w_"])], [("y", F, None)], inits=[const("w", ones(2, 3, k, k))])


def batch_norm(opset, **kw):
    return model([n("BatchNormalization", ["x", "s", "bb", "m", "v"], ["y"], **kw)],
                 [("x", F, ["b", "c", "h"])] + [(p, F, ["p", "q"] if kw.get("spatial") == 0 else ["p"])
                                                for p in ("s", "bb", "m", "v")],
                 [("y", F, None)], opset=opset)


def bn_feeds(b, c, h, p):
    param = ones(*p) if isinstance(p, tuple) else ones(p)
    return {"x": ones(b, c, h), **{k: param for k in ("s", "bb", "m", "v")}}


Z = [0, 1, 2]
CASES = {
    **{f"{op}_{kind}": (_pool(op, **kw), dict(b=Z, c=Z, h=Z, w=Z), lambda b, c, h, w: {"x": ones(b, c, h, w)})
       for op, kw in (("MaxPool", dict(kernel_shape=[1, 1])), ("AveragePool", dict(kernel_shape=[1, 1])),
                      ("LpPool", dict(kernel_shape=[1, 1])), ("GlobalAveragePool", {}), ("GlobalMaxPool", {}))
       for kind in ("empty",)},
    "MaxPool_kernel2": (_pool("MaxPool", kernel_shape=[2, 2]), dict(b=Z, c=Z, h=[0, 1, 2, 3], w=[1, 2]),
                        lambda b, c, h, w: {"x": ones(b, c, h, w)}),
    **{f"{op}_empty_axis": (model([n(op, ["x"], ["y"], axis=1, keepdims=k)], [("x", F, ["a", "b", "d"])],
                                  [("y", I64, None)]),
                            dict(a=Z, b=Z, d=Z), lambda a, b, d: {"x": ones(a, b, d)})
       for op in ("ArgMax", "ArgMin") for k in (0, 1)},
    "OneHot_depth": (model([n("Shape", ["d"], ["ds"]), n("OneHot", ["idx", "ds", "vals"], ["y"])],
                           [("idx", I64, ["k"]), ("d", F, ["depth"])], [("y", F, None)],
                           inits=[const("vals", np.array([0, 1], np.float32))]),
                     dict(k=Z, depth=[0, 1, 2, 3]),
                     lambda k, depth: {"idx": np.zeros(k, np.int64), "d": ones(depth)}),
    "OneHot_float_depth": (model([n("Shape", ["d"], ["ds"]), n("Cast", ["ds"], ["df"], to=1), n("Div", ["df", "two"], ["dh"]),
                                 n("OneHot", ["idx", "dh", "vals"], ["y"])],
                                [("idx", I64, ["k"]), ("d", F, ["depth"])], [("y", F, None)],
                                inits=[const("vals", np.array([0, 1], np.float32)), const("two", np.array([2], np.float32))]),
                           dict(k=Z, depth=[0, 1, 2, 3, 4]),
                           lambda k, depth: {"idx": np.zeros(k, np.int64), "d": ones(depth)}),
    "Einsum_ellipsis": (_einsum("...i,...i->...i", ["p", "i"], ["q", "i"]), dict(p=[1, 2, 3], q=[1, 2, 3], i=[1, 2]),
                        lambda p, q, i: {"i0": ones(p, i), "i1": ones(q, i)}),
    "Einsum_ellipsis_matmul": (_einsum("...ij,...jk->...ik", ["p", "q", 2, 3], ["r", "t", 3, 4]),
                               dict(p=[1, 2, 3], q=[1, 3], r=[1, 2], t=[1, 2, 3]),
                               lambda p, q, r, t: {"i0": ones(p, q, 2, 3), "i1": ones(r, t, 3, 4)}),
    "Einsum_repeated": (_einsum("ii->i", ["p", "q"]), dict(p=[1, 2, 3], q=[1, 2, 3]),
                        lambda p, q: {"i0": ones(p, q)}),
    "Einsum_repeated_batch": (_einsum("bii,bj->bij", ["b", "p", "q"], ["c", 2]), dict(b=[1, 2], p=[1, 2], q=[1, 2], c=[1, 2]),
                              lambda b, p, q, c: {"i0": ones(b, p, q), "i1": ones(c, 2)}),
    "ConcatFromSequence": (model([n("SequenceConstruct", ["a", "b"], ["s"]), n("ConcatFromSequence", ["s"], ["y"], axis=0)],
                                 [("a", F, ["p", "q"]), ("b", F, ["r", "t"])], [("y", F, None)]),
                           dict(p=[1, 2], q=[1, 2, 3], r=[1, 2], t=[1, 2, 3]),
                           lambda p, q, r, t: {"a": ones(p, q), "b": ones(r, t)}),
    "ConcatFromSequence_new_axis": (model([n("SequenceConstruct", ["a", "b"], ["s"]),
                                           n("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1)],
                                          [("a", F, ["p", "q"]), ("b", F, ["r", "t"])], [("y", F, None)]),
                                    dict(p=[1, 2], q=[1, 2], r=[1, 2], t=[1, 2]),
                                    lambda p, q, r, t: {"a": ones(p, q), "b": ones(r, t)}),
    "SplitToSequence_sizes": (model([n("SplitToSequence", ["x", "sp"], ["s"], axis=0), n("SequenceLength", ["s"], ["y"])],
                                    [("x", F, ["a", 2])], [("y", I64, None)], inits=[const("sp", np.array([2, 3], np.int64))]),
                              dict(a=[1, 4, 5, 6, 10]), lambda a: {"x": ones(a, 2)}),
    "SequenceAt_symbolic": (_seq_at_symbolic(), dict(k=list(range(0, 10))),
                            lambda k: {"a": ones(2), "z": ones(k)}),
    **{f"SequenceAt_{p}": (_seq_at(p), dict(a=[1, 2, 3, 4]), lambda a: {"x": ones(a, 2)}) for p in (-3, -2, 1, 2)},
    **{f"ConvTranspose_out{o}_s{s}_k{k}_d{d}": (_conv_transpose(o, s, k, d), dict(b=[1], h=[1, 2, 3, 4, 5], w_=[2, 3, 4]),
                                                lambda b, h, w_: {"x": ones(b, 2, h, w_)})
       for o, s, k, d in ((5, 2, 3, 1), (6, 2, 3, 1), (9, 2, 3, 1), (8, 3, 2, 2))},
    "ConvTranspose_out7_s1_wide": (_conv_transpose(7, 1), dict(b=[1], h=[3, 4, 5, 6], w_=[4, 5, 6]),
                                   lambda b, h, w_: {"x": ones(b, 2, h, w_)}),
    "BatchNormalization_7_spatial0": (batch_norm(7, spatial=0), dict(b=[1, 2], c=[1, 2], h=[1, 2], p=[1, 2], q=[1, 2]),
                                      lambda b, c, h, p, q: bn_feeds(b, c, h, (p, q))),
    **{f"BatchNormalization_{o}": (batch_norm(o), dict(b=[1, 2], c=[1, 2, 3], h=[1, 2], p=[1, 2, 3, 4]),
                                   lambda b, c, h, p: bn_feeds(b, c, h, p)) for o in (7, 9, 15)},
}


