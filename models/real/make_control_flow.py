# ruff: noqa: F821, B007  (onnxscript: FLOAT["n", "d"] names dims, no forward references; `for i in range(n)` is a Loop)
"""Control flow written by hand in onnxscript (``@script``: Python ``for``, ``while`` and ``if``
become Loop and If; a ``@graph`` body makes a Scan): the shapes a loop carries, grows or stacks,
and branches that differ in length under a shape condition. Used by make_real.py.

The functions are defined inside the makers, which import onnxscript only when run; onnxscript
reads a function's source and looks its type names up in the module's globals, so ``_onnxscript``
puts them there.
"""

# (no `from __future__ import annotations`: onnxscript reads the types of the annotations)

from corpus import entry

MAKERS = []
SCRIPT = "make_control_flow.py"


def maker(fn):
    MAKERS.append(fn)
    return fn


def _onnxscript():
    import onnxscript
    from onnxscript import opset18

    globals().update(FLOAT=onnxscript.FLOAT, INT64=onnxscript.INT64, op=opset18)
    return onnxscript


def _entry(name, model, sizes, feeds=None, note=""):
    import onnxscript

    src = {"kind": "converter", "converter": "onnxscript @script, to_model_proto()", "version": onnxscript.__version__,
           "script": f"models/real/{SCRIPT}:{name}"}
    init = {t.name for t in model.graph.initializer}
    shapes = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
              for i in model.graph.input if i.name not in init}
    return model, entry(name, "onnxscript", src, shapes, sizes, feeds=feeds, note=note)


@maker
def onnxscript_loops():
    """Loops over a shape: a running sum over the rows (the carried value keeps its shape), a
    carried value that grows by one row an iteration ([n, d] to [2n, d]), and a ``while`` on data
    (halve until small: the shape is kept whatever the trip count)."""
    script, op, FLOAT = _onnxscript().script, globals()["op"], globals()["FLOAT"]

    @script()
    def row_sum(x: FLOAT["n", "d"]) -> FLOAT["d"]:
        n = op.Squeeze(op.Shape(x, start=0, end=1))
        acc = op.ReduceSum(op.Mul(x, op.Constant(value_float=0.0)), op.Constant(value_ints=[0]), keepdims=0)
        for i in range(n):
            acc = acc + op.Gather(x, i, axis=0)
        return acc

    @script()
    def grow(x: FLOAT["n", "d"]) -> FLOAT["m", "d"]:
        n = op.Squeeze(op.Shape(x, start=0, end=1))
        y = op.Identity(x)
        for i in range(n):
            y = op.Concat(y, op.Gather(x, op.Constant(value_ints=[0]), axis=0), axis=0)
        return op.Relu(y)

    @script()
    def shrink(x: FLOAT["b", "d"]) -> FLOAT["b", "d"]:
        cond = op.ReduceMax(op.Abs(x), keepdims=0) > op.Constant(value_float=1.0)
        while cond:
            x = x * op.Constant(value_float=0.5)
            cond = op.ReduceMax(op.Abs(x), keepdims=0) > op.Constant(value_float=1.0)
        return op.Add(x, x)

    yield _entry("onnxscript_loop_row_sum", row_sum.to_model_proto(), [{"n": 1, "d": 3}, {"n": 5, "d": 2}])
    yield _entry("onnxscript_loop_grow", grow.to_model_proto(), [{"n": 1, "d": 3}, {"n": 4, "d": 2}],
                 note="the carried value grows a row an iteration: m = 2n")
    yield _entry("onnxscript_while", shrink.to_model_proto(), [{"b": 1, "d": 3}, {"b": 2, "d": 5}],
                 feeds={"x": {"int": [-9, 9]}})


@maker
def onnxscript_branches():
    """An If on a shape (``s > 8``) whose branches differ in length: every second step of a long
    sequence, a short one kept (issue 22's pattern 6); and an If inside a Loop whose trip count
    is data (``k``): the length after k steps depends on k."""
    script, op, FLOAT, INT64 = _onnxscript().script, globals()["op"], globals()["FLOAT"], globals()["INT64"]

    @script()
    def halve_long(x: FLOAT["b", "s", "d"]) -> FLOAT["b", "t", "d"]:
        s = op.Squeeze(op.Shape(x, start=1, end=2))
        if s > 8:
            y = op.Slice(x, op.Constant(value_ints=[0]), op.Constant(value_ints=[9223372036854775807]),
                         op.Constant(value_ints=[1]), op.Constant(value_ints=[2]))
        else:
            y = op.Identity(x)
        return op.Softmax(y, axis=1)

    @script()
    def steps(x: FLOAT["b", "s"], k: INT64) -> FLOAT["b", "t"]:
        y = op.Identity(x)
        for i in range(k):
            n = op.Shape(y, start=1, end=2)
            if op.Squeeze(n) > 4:
                y = op.Slice(y, op.Constant(value_ints=[1]), n, op.Constant(value_ints=[1]))
            else:
                y = op.Concat(y, y, axis=1)
        return y

    yield _entry("onnxscript_if_halve", halve_long.to_model_proto(),
                 [{"b": 1, "s": 5, "d": 3}, {"b": 2, "s": 11, "d": 2}],
                 note="an If on s > 8: (s - 1)//2 + 1 rows when true, s when not")
    yield _entry("onnxscript_loop_if", steps.to_model_proto(), [{"b": 1, "s": 3}, {"b": 2, "s": 6}],
                 feeds={"k": {"value": 3}}, note="k is data (fed 3): the length after the loop depends on it")


@maker
def onnxscript_scan():
    """A Scan written as an RNN cell over ``[seq, b, 4]`` with an outer-scope weight; its state
    is ``[b, 8]`` and its stacked output ``[seq, b, 8]``."""
    onnxscript = _onnxscript()
    script, graph, op, FLOAT = onnxscript.script, onnxscript.graph, globals()["op"], globals()["FLOAT"]

    @script()
    def rnn(x: FLOAT["seq", "b", 4], h0: FLOAT["b", 8], w: FLOAT[4, 8], u: FLOAT[8, 8]) -> (FLOAT["b", 8],
                                                                                           FLOAT["seq", "b", 8]):
        @graph()
        def step(h: FLOAT["b", 8], xt: FLOAT["b", 4]) -> (FLOAT["b", 8], FLOAT["b", 8]):
            hn = op.Tanh(op.Add(op.MatMul(xt, w), op.MatMul(h, u)))
            ho = op.Identity(hn)
            return hn, ho

        last, hs = op.Scan(h0, x, body=step, num_scan_inputs=1)
        return last, hs

    yield _entry("onnxscript_scan_rnn", rnn.to_model_proto(), [{"seq": 1, "b": 1}, {"seq": 6, "b": 3}])
