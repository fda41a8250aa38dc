"""The written model runs, with the shapes it declares, at every size its declared inputs
allow (issue 21, item 1). onnxruntime folds shapes and plans buffers from the value_info it
is given: a dim written as 1 for a bound batch made a tf2onnx GRU fail at batch 2 ("Shape
mismatch attempting to re-use buffer") and a paddle2onnx classifier fail at a Reshape.
``--bind`` now writes the number into the graph inputs (onnxruntime then refuses other sizes
at the input, cleanly), and dims that hold only under ``--range`` or ``--assume`` are not
written. Each written model is run as a user runs it, with its value_info in place, and
every declared dim compared with the run (oracle.written_model_failure)."""

import json
import os

import onnx
import pytest
from click.testing import CliRunner
from oracle import check_written_runs, session_of
from resolution import feeds_for

import onnxsym
from onnxsym.cli import main

REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "real")
MANIFEST = {e["name"]: e for e in json.load(open(os.path.join(REAL, "manifest.json")))}

# the tf2onnx Keras LSTM and GRU (the GRU's while Loop failed inside), and a paddle2onnx classifier
SEQ = [{"batch": b, "seq": s} for b, s in [(1, 7), (2, 3), (3, 12), (1, 1), (4, 2)]]
WIDTH = [{"batch": b, "width": w} for b, w in [(1, 192), (2, 100), (3, 64), (1, 40)]]
MODELS = [("tf_lstm_text", SEQ), ("tf_gru_text", SEQ), ("paddle_ocr_cls", WIDTH)]


def _load(name):
    path = os.path.join(REAL, f"{name}.onnx")
    model = onnx.load(path)
    spec = MANIFEST[name]["feeds"]
    return path, model, lambda binding: feeds_for(model, binding, spec)


def _input_dims(m):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in m.graph.input[0].type.tensor_type.shape.dim]


@pytest.mark.parametrize("name,sizes", MODELS)
def test_a_model_annotated_without_bind_runs_at_every_size(name, sizes):
    path, model, feeds = _load(name)
    written = onnxsym.annotate(path)
    assert check_written_runs(model, written, sizes, feeds) > 0


@pytest.mark.parametrize("name,sizes", MODELS)
def test_bind_writes_the_number_into_the_graph_inputs(name, sizes):
    path, model, feeds = _load(name)
    written = onnxsym.annotate(path, bind={"batch": 1})
    assert _input_dims(written)[0] == 1 and _input_dims(model)[0] == "batch"
    at_one = [b for b in sizes if b["batch"] == 1]
    assert len(at_one) >= 2
    check_written_runs(model, written, at_one, feeds)
    # at another batch onnxruntime refuses the input, naming it, instead of failing inside
    with pytest.raises(Exception, match="[Ii]nvalid dimensions for input"):
        session_of(written).run(None, feeds(dict(sizes[1], batch=2)))


@pytest.mark.parametrize("name,sizes,kwargs", [
    ("tf_lstm_text", SEQ, {"assume": ["seq == 7"]}),
    ("tf_gru_text", SEQ, {"ranges": {"seq": (7, 7)}, "bind": {"batch": 1}}),
    ("paddle_ocr_cls", WIDTH, {"assume": ["width == 192"]}),
    ("paddle_ocr_cls", WIDTH, {"ranges": {"width": (100, 100)}}),
])
def test_a_range_or_an_assumption_does_not_narrow_the_written_dims(name, sizes, kwargs):
    """Under ``seq == 7`` every dim computed from seq is 7; written so, the model would fail
    (or declare a wrong dim) at seq 3, which its inputs allow. The assumption is recorded."""
    path, model, feeds = _load(name)
    result = onnxsym.infer(path, **kwargs)
    written = onnxsym.write_result(result)
    bind = kwargs.get("bind", {})
    at_bound = [b for b in sizes if all(b[k] == v for k, v in bind.items())]
    check_written_runs(model, written, at_bound, feeds)
    user = onnxsym.output.metadata.read(written)["user"]
    assert user["assume"] == kwargs.get("assume", []) and user["bind"] == bind
    assert user["ranges"] == {k: list(v) for k, v in kwargs.get("ranges", {}).items()}


def test_the_cli_says_what_bind_and_assume_mean_for_the_written_model(tmp_path):
    path, model, feeds = _load("tf_gru_text")
    out = str(tmp_path / "gru.onnx")
    r = CliRunner().invoke(main, ["annotate", path, "-o", out, "--bind", "batch=1", "--assume", "seq == 5"])
    assert r.exit_code == 0, r.output
    assert "the graph inputs are written with batch = 1: the model runs at that size only" in r.output
    assert "--range and --assume narrow only what is printed here" in r.output
    written = onnx.load(out)
    assert _input_dims(written) == [1, "seq"]
    check_written_runs(model, written, [{"batch": 1, "seq": 5}, {"batch": 1, "seq": 9}], feeds)


def _known_two_model(cond_nodes, extra_inputs=(), extra_inits=()):
    """x's reshaped, reduced copy t has a dim d that only onnxsym knows is 2 (through a Reshape
    to a computed target); ``If(cond)`` computes ConstantOfShape(d - 5) in its then branch."""
    import numpy as np
    from helpers import F, graph, model
    from onnx import helper, numpy_helper

    def c(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    N = helper.make_node
    then_g = graph([N("Shape", ["t"], ["ts"]), N("Gather", ["ts", "one"], ["d2"], axis=0),
                    N("Sub", ["d2", "five"], ["neg"]), N("ConstantOfShape", ["neg"], ["dead"])], [], ["dead"], name="then")
    else_g = graph([N("ConstantOfShape", ["one"], ["alive"])], [], ["alive"], name="else")
    return model([N("Reshape", ["x", "tgt"], ["r"]), N("ReduceMax", ["r"], ["m"], axes=[0, 2], keepdims=1),
                  N("Shape", ["m"], ["s"]), N("Slice", ["s", "zero", "one"], ["head"]),
                  N("Slice", ["s", "one", "big"], ["tail"]), N("ReduceProd", ["tail"], ["p"], axes=[0], keepdims=1),
                  N("Concat", ["head", "p"], ["cat"], axis=0), N("Reshape", ["m", "cat"], ["t"]), *cond_nodes,
                  N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
                 [("x", F, ["batch", 2, "h", "w"]), *extra_inputs], ["y"],
                 [c("tgt", [0, 2, -1]), c("zero", [0]), c("one", [1]), c("big", [2**63 - 1]), c("five", [5]),
                  *(c(n, v) for n, v in extra_inits)], opset=17)


def test_a_branch_never_taken_is_not_given_the_dims_that_make_onnxruntime_refuse_it():
    """``If(d >= 5)`` with ``ConstantOfShape(d - 5)`` in its then branch, where d is a dim
    only onnxsym knows to be 2 (through a Reshape to a computed target): written as 2,
    onnxruntime folds the never-taken branch to ConstantOfShape(-3) and refuses to load the
    model, which runs without the annotation (a fuzzer finding). The values that branch
    reads are left unwritten."""
    import numpy as np
    from onnx import helper

    N = helper.make_node
    m = _known_two_model([N("Shape", ["t"], ["ts0"]), N("Gather", ["ts0", "one_s"], ["d"], axis=0),
                          N("GreaterOrEqual", ["d", "five_s"], ["cond"])],
                         extra_inits=[("one_s", 1), ("five_s", 5)])
    written = onnxsym.annotate(m)
    assert "t" not in {vi.name for vi in written.graph.value_info}  # (the branch reads it)
    assert "m" in {vi.name for vi in written.graph.value_info}
    sizes = [{"batch": 1, "h": 3, "w": 4}, {"batch": 2, "h": 5, "w": 1}]

    def feeds(b):
        return {"x": np.ones([b["batch"], 2, b["h"], b["w"]], np.float32)}
    check_written_runs(m, written, sizes, feeds)


def test_a_declaration_on_a_value_a_dead_branch_reads_is_replaced_by_its_dims():
    """The value a never-taken branch reads gets its dims written where onnxruntime loads the
    result (TensorRT and onnxruntime's fusions read them); what the model declares there (a stale
    ``9`` where the run has h) must not stay (fuzzer seed 247)."""
    import numpy as np
    from helpers import F, graph, model
    from onnx import helper, numpy_helper

    N = helper.make_node
    then_g = graph([N("Relu", ["t"], ["relu"])], [], ["relu"], name="then")
    else_g = graph([N("Concat", ["t", "t"], ["cat"], axis=0)], [], ["cat"], name="else")
    m = model([N("Transpose", ["x"], ["t"], perm=[2, 3, 0, 1]), N("Shape", ["t"], ["s"]),
               N("Gather", ["s", "three"], ["d"], axis=0), N("Greater", ["d", "zero"], ["cond"]),
               N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
              [("x", F, ["batch", 1, "h", "w"])], ["y"],
              [numpy_helper.from_array(np.array(3, np.int64), "three"),
               numpy_helper.from_array(np.array(0, np.int64), "zero")], opset=17)
    m.graph.value_info.append(helper.make_tensor_value_info("t", F, [9, "total", "batch", "n"]))
    written = onnxsym.annotate(m)
    (t,) = [vi for vi in written.graph.value_info if vi.name == "t"]
    assert [d.dim_value or d.dim_param for d in t.type.tensor_type.shape.dim] == ["h", "w", "batch", 1]
    sizes = [{"batch": 2, "h": 1, "w": 16}, {"batch": 3, "h": 9, "w": 2}]

    def feeds(b):
        return {"x": np.ones([b["batch"], 1, b["h"], b["w"]], np.float32)}
    check_written_runs(m, written, sizes, feeds)


def _guarded_model():
    """``If(h >= 5)``: ConstantOfShape(h - 5) when taken, ConstantOfShape([1]) else; and a
    Reshape of x to [h, -1] (0 elements at h = 0)."""
    import numpy as np
    from helpers import F, graph, model
    from onnx import helper, numpy_helper

    def c(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    N = helper.make_node
    then_g = graph([N("Sub", ["d1", "five"], ["n"]), N("ConstantOfShape", ["n"], ["t"])], [], ["t"], name="then")
    else_g = graph([N("ConstantOfShape", ["one"], ["e"])], [], ["e"], name="else")
    return model([N("Shape", ["x"], ["s"]), N("Gather", ["s", "zero_s"], ["d"], axis=0),
                  N("Unsqueeze", ["d", "zero"], ["d1"]), N("GreaterOrEqual", ["d", "five_s"], ["cond"]),
                  N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
                  N("Concat", ["d1", "minus"], ["tgt"], axis=0), N("Reshape", ["x", "tgt"], ["r"])],
                 [("x", F, ["h"])], ["y", "r"],
                 [c("zero", [0]), c("zero_s", 0), c("one", [1]), c("five", [5]), c("five_s", 5), c("minus", [-1])],
                 opset=17)


@pytest.mark.parametrize("h", [1, 0])
def test_a_bind_that_onnxruntime_would_refuse_in_the_inputs_leaves_them_symbolic(h, tmp_path):
    """At h = 1 the bind decides the If (its then branch would be ConstantOfShape(-4)), at
    h = 0 the Reshape is of 0 elements to [0, -1]: onnxruntime runs the model there, but with
    h written into the input it refuses to load it (fuzzer findings). The input stays
    symbolic and every dim is written as it holds at every size."""
    import numpy as np

    m = _guarded_model()
    written = onnxsym.annotate(m, bind={"h": h}, allow_zero=h == 0)
    assert _input_dims(written) == ["h"]
    check_written_runs(m, written, [{"h": h}, {"h": 7}, {"h": 2}], lambda b: {"x": np.ones(b["h"], np.float32)})
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path)
    r = CliRunner().invoke(main, ["annotate", path, "-o", str(tmp_path / "o.onnx"), "--bind", f"h={h}"]
                           + (["--allow-zero"] if h == 0 else []))
    assert r.exit_code == 0, r.output
    assert "the graph inputs are not specialised" in r.output



def test_bind_specialises_an_input_dim_declared_as_a_text_over_the_symbol():
    """An input declared ``[batch, 2*batch]``: at batch = 3 both dims are written 3 and 6."""
    import numpy as np
    from helpers import F, model
    from onnx import helper

    m = model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("ReduceSum", ["y"], ["s"], keepdims=1)],
              [("x", F, ["batch", "2*batch"])], ["s"], opset=13)
    written = onnxsym.annotate(m, bind={"batch": 3})
    assert _input_dims(written) == [3, 6]
    check_written_runs(m, written, [{"batch": 3}], lambda b: {"x": np.ones([b["batch"], 2 * b["batch"]], np.float32)})


def _flag_model(then_nodes, then_out, x_shape, inits=()):
    """``If(flag)`` on a bool graph input: ``then_nodes`` (reading x) when true, ``Identity(x)``."""
    from helpers import F, graph, model
    from onnx import TensorProto, helper

    N = helper.make_node
    then_g = graph(then_nodes, [], [then_out], name="then")
    else_g = graph([N("Identity", ["x"], ["same"])], [], ["same"], name="else")
    return model([N("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g)],
                 [("x", F, x_shape), ("flag", TensorProto.BOOL, [])], ["y"], list(inits), opset=17)


def test_a_bind_leaves_inputs_symbolic_where_a_branch_the_data_picks_would_fail_at_it():
    """``If(flag)`` whose then branch squeezes h: with h bound to 11 written into the input,
    onnxruntime's load-time inference refuses the Squeeze of 11 in the branch flag=False never
    runs (fuzzer seeds 1388, 3663); the inputs stay symbolic and the model runs at h = 11."""
    import numpy as np
    from onnx import helper, numpy_helper

    m = _flag_model([helper.make_node("Squeeze", ["x", "one"], ["sq"])], "sq", ["batch", "h"],
                    [numpy_helper.from_array(np.array([1], np.int64), "one")])
    m.graph.node.append(helper.make_node("Relu", ["x"], ["rx"]))  # a value whose dims are written
    m.graph.output.append(helper.make_empty_tensor_value_info("rx"))
    written = onnxsym.annotate(m, bind={"h": 11})
    assert [d.dim_param or d.dim_value for d in written.graph.input[0].type.tensor_type.shape.dim] == ["batch", "h"]

    def feeds(b):
        return {"x": np.ones([b["batch"], b["h"]], np.float32), "flag": np.array(False)}
    check_written_runs(m, written, [{"batch": 2, "h": 11}, {"batch": 1, "h": 11}], feeds)


def test_values_a_branch_the_data_picks_reads_keep_the_model_running_where_it_runs():
    """The then branch does ConstantOfShape(d - 5) of a dim d only onnxsym knows is 2 (through a
    Reshape to a computed target), and the model runs with flag=False (fuzzer seed 2906's kind).
    Whatever is written of the values that branch reads (the load check judges it, as everywhere),
    the written model runs where the original does."""
    import numpy as np
    from onnx import TensorProto, helper

    m = _known_two_model([helper.make_node("Identity", ["flag"], ["cond"])], [("flag", TensorProto.BOOL, [])])
    written = onnxsym.annotate(m)
    assert "m" in {vi.name for vi in written.graph.value_info}
    # (onnxruntime's optimizer refuses the original too, so the written model is loaded as
    # verify loads the original: its load-time inference reads the declared dims all the same)
    from oracle import session_of
    for b, h, w in ((1, 3, 4), (2, 5, 1)):
        out = session_of(written, optimize=False).run(
            None, {"x": np.ones([b, 2, h, w], np.float32), "flag": np.array(False)})
        assert out[0].shape == (1,)


def test_a_value_a_branch_the_data_picks_reads_is_written_where_the_model_loads():
    """openWakeWord's hey_jarvis (a torch 1.12 export shipped in its 0.4 wheel): ``y = Sigmoid(h)``,
    then ``If(y >= 0.5)`` whose else branch is ``Identity(y)``. ``y`` is read by a branch the data
    picks; its dims are true at every size and the load check finds nothing refused, so they are
    written (onnxruntime's tool, onnx and onnx-shape-inference all write them), and the written
    model runs with either branch."""
    import numpy as np
    from helpers import F, graph, model
    from onnx import TensorProto, helper

    N = helper.make_node
    then_g = graph([N("Neg", ["y"], ["ny"])], [], ["ny"], name="then")
    else_g = graph([N("Identity", ["y"], ["same"])], [], ["same"], name="else")
    m = model([N("Sigmoid", ["x"], ["y"]), N("ReduceMax", ["y"], ["top"], keepdims=0),
               N("Greater", ["top", "half"], ["cond"]),
               N("If", ["cond"], ["out"], then_branch=then_g, else_branch=else_g)],
              [("x", F, ["batch", 4])], ["out"],
              [helper.make_tensor("half", TensorProto.FLOAT, [], [0.5])], opset=17)
    written = onnxsym.annotate(m)
    y = next(vi for vi in written.graph.value_info if vi.name == "y")
    assert [d.dim_param or d.dim_value for d in y.type.tensor_type.shape.dim] == ["batch", 4]

    def feeds(b):
        return {"x": np.full([b["batch"], 4], b["sign"], np.float32)}
    check_written_runs(m, written, [{"batch": 2, "sign": 1}, {"batch": 3, "sign": -9}], feeds)


def _split18_model(target_nodes):
    """An opset-18 Split of ``t`` on axis 0 into three, with neither ``num_outputs`` nor a
    ``split`` input: onnxruntime's kernel splits evenly, and onnx's inference (which
    onnxruntime runs on loading) refuses the node once it sees the axis's dim."""
    import numpy as np
    from helpers import F, init, model
    from onnx import helper
    N = helper.make_node
    return model([*target_nodes, N("Split", ["t"], ["a", "b", "c"], axis=0, name="split")],
                 [("x", F, ["seq", 3])], [("a", F), ("b", F), ("c", F)],
                 [init("zero", np.array([0], np.int64)), init("one", np.array([1], np.int64)),
                  init("two", np.array([2], np.int64))], opset=18)


def test_a_split_without_num_outputs_on_a_dim_only_onnxsym_knows_still_loads():
    """x ``[seq, 3]`` reshaped to ``[3, seq]`` by a target computed from its shape: onnx's
    inference does not know t's first dim, onnxsym does (3). Written as 3, onnxruntime refused
    to load the model (the kind of fuzzer seeds 4136, 4588); the dims that lead to the Split are
    not written, the model loads and runs at every size, and the metadata says why."""
    import json

    import numpy as np
    from onnx import helper

    N = helper.make_node
    m = _split18_model([N("Shape", ["x"], ["s"]), N("Slice", ["s", "one", "two"], ["c3"]),
                        N("Slice", ["s", "zero", "one"], ["n"]), N("Concat", ["c3", "n"], ["tgt"], axis=0),
                        N("Reshape", ["x", "tgt"], ["t"])])
    session_of(m)  # onnxruntime loads the model as given
    written = onnxsym.annotate(m)
    withheld = json.loads({p.key: p.value for p in written.metadata_props}["onnxsym.withheld"])
    assert "t" in withheld and "Split node 'split'" in withheld["t"], withheld
    check_written_runs(m, written, [{"seq": s} for s in (3, 6, 1)], lambda b: {"x": np.ones([b["seq"], 3], np.float32)})


def test_the_load_check_reads_a_graph_stored_out_of_order_as_onnxruntime_does():
    """The same Split model with its nodes stored in reverse: inference and onnx's check read
    them in an order that computes each value first (onnxruntime sorts them when it loads),
    so the Split is still found, and the written model loads and runs at every size."""
    import json

    import numpy as np
    from onnx import helper

    N = helper.make_node
    m = _split18_model([N("Shape", ["x"], ["s"]), N("Slice", ["s", "one", "two"], ["c3"]),
                        N("Slice", ["s", "zero", "one"], ["n"]), N("Concat", ["c3", "n"], ["tgt"], axis=0),
                        N("Reshape", ["x", "tgt"], ["t"])])
    m.graph.node.reverse()
    session_of(m)  # onnxruntime loads the model as given
    assert not onnxsym.infer(m).in_order
    written = onnxsym.annotate(m)
    withheld = json.loads({p.key: p.value for p in written.metadata_props}["onnxsym.withheld"])
    assert "t" in withheld and "Split node 'split'" in withheld["t"], withheld
    assert [n.name for n in written.graph.node] == [n.name for n in m.graph.node]  # the user's order kept
    check_written_runs(m, written, [{"seq": s} for s in (3, 6, 1)], lambda b: {"x": np.ones([b["seq"], 3], np.float32)})


def test_a_bind_that_makes_a_split_without_num_outputs_static_leaves_the_inputs_symbolic(tmp_path):
    """Fuzzer seeds 4136, 4588: ``Split`` (opset 18, no ``num_outputs``) of ``Concat(x, x)`` on
    the axis ``--bind seq=3`` makes 6: written into the input, onnxruntime refuses the model
    it runs at seq = 3. The inputs stay symbolic (the summary says so) and the model runs."""
    import numpy as np
    from helpers import F, model
    from onnx import helper

    N = helper.make_node
    m = model([N("Concat", ["x", "x"], ["cat"], axis=-1), N("Split", ["cat"], ["a", "b"], axis=1, name="split")],
              [("x", F, [3, "seq"])], [("a", F), ("b", F)], opset=18)
    session_of(m)
    written = onnxsym.annotate(m, bind={"seq": 3})
    assert [d.dim_param or d.dim_value for d in written.graph.input[0].type.tensor_type.shape.dim] == [3, "seq"]
    check_written_runs(m, written, [{"seq": 3}, {"seq": 5}], lambda b: {"x": np.ones([3, b["seq"]], np.float32)})
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path)
    r = CliRunner().invoke(main, ["annotate", path, "-o", str(tmp_path / "o.onnx"), "--bind", "seq=3"])
    assert r.exit_code == 0 and "the graph inputs are not specialised" in r.output, r.output


def test_a_topk_in_a_branch_the_data_picks_on_rows_folded_from_written_dims():
    """Fuzzer seed 6515: the domain pins batch to 1 (a Reshape keeps 3*batch elements in 3), so
    m = ReduceMax(x) is written ``[1, 3, 1, 1]``; onnxruntime folds the Shape/Slice/Concat of m
    into the target of t = Reshape(m) and, inferring the If's else branch again, refuses its
    TopK(3) of t's 1 row (a branch that runs only where the data pick it). The values that lead
    there are not written; the model loads and runs as given."""
    import numpy as np
    from helpers import F, graph, init, model
    from onnx import helper

    N = helper.make_node
    i64 = lambda name, v: init(name, np.array(v, np.int64))  # noqa: E731
    else_g = graph([N("TopK", ["t", "k"], ["top", "idx"], axis=2, name="topk")], [], ["top"], name="else")
    then_g = graph([N("Neg", ["t"], ["neg"])], [], ["neg"], name="then")
    m = model([N("ReduceMax", ["x"], ["m"], axes=[0, 3], keepdims=1),
               N("Shape", ["m"], ["s"]), N("Gather", ["s", "one"], ["c"], axis=0), N("Sub", ["c", "two"], ["c1"]),
               N("Concat", ["c1", "zero"], ["tgt1"], axis=0), N("Reshape", ["m", "tgt1"], ["pinned"]),
               N("Slice", ["s", "zero", "two"], ["head"]), N("Slice", ["s", "two", "big"], ["tail"]),
               N("ReduceProd", ["tail"], ["p"], axes=[0], keepdims=1), N("Concat", ["head", "p"], ["tgt"], axis=0),
               N("Reshape", ["m", "tgt"], ["t"]), N("ReduceSum", ["t"], ["sum"], keepdims=0),
               N("Greater", ["sum", "zero_f"], ["cond"]),
               N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
              [("x", F, ["seq", 3, "batch", "seq"])], [("pinned", F), ("y", F)],
              [i64("one", [1]), i64("two", [2]), i64("zero", [0]), i64("big", [2**63 - 1]), i64("k", [3]),
               init("zero_f", np.array(0, np.float32))], opset=13)
    session_of(m)
    written = onnxsym.annotate(m)
    assert "m" not in {vi.name for vi in written.graph.value_info if vi.type.tensor_type.HasField("shape")}
    # ones sum to more than 0: the then branch runs, at batch 1 only (the first Reshape)
    check_written_runs(m, written, [{"seq": s, "batch": 1} for s in (1, 4, 7)],
                       lambda b: {"x": np.ones([b["seq"], 3, b["batch"], b["seq"]], np.float32)})


def test_a_value_declared_in_value_info_and_as_an_output_gets_the_dims_at_both():
    """A graph output also listed in value_info with a stale [9, 5] (the fuzzer's shrinker made
    one, seed 4136): only the output's type was written, the value_info entry kept claiming
    [9, 5]. Each declaration now says what onnxruntime computes."""
    import numpy as np
    from helpers import F, model
    from onnx import helper

    m = model([helper.make_node("Concat", ["x", "x"], ["y"], axis=1)], [("x", F, [3, "seq"])], [("y", F, None)])
    m.graph.value_info.append(helper.make_tensor_value_info("y", F, [9, 5]))
    written = onnxsym.annotate(m)
    declared = [d for d in list(written.graph.value_info) + list(written.graph.output) if d.name == "y"]
    assert len(declared) == 2
    check_written_runs(m, written, [{"seq": 2}, {"seq": 5}], lambda b: {"x": np.ones([3, b["seq"]], np.float32)})


def test_a_dim_onnx_infers_otherwise_than_onnxruntime_runs_is_not_written():
    """Slice of x [3, batch] from 0 to INT64_MAX by -2 (fuzzer seed 495): onnxruntime's kernel
    gives 1 row, onnx's inference 0. Written as 1, onnx's strict inference (and so
    ``onnx.checker``'s full check) refuses the model for the conflict: the output is written
    with its element type and rank, no dim claimed, and the model loads, checks and runs."""
    import json

    import numpy as np
    from helpers import F, init, model
    from onnx import helper

    i64 = lambda name, v: init(name, np.array(v, np.int64))  # noqa: E731
    m = model([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="sl"),
               helper.make_node("Relu", ["x"], ["r"])], [("x", F, [3, "batch"])],
              ["y", "r"], [i64("s", [0]), i64("e", [2**63 - 1]), i64("a", [0]), i64("st", [-2])], opset=13)
    real = session_of(m, optimize=False).run(None, {"x": np.ones([3, 2], np.float32)})[0].shape
    assert real == (1, 2) and tuple(onnxsym.infer(m).shape("y")) == (1, onnxsym.dims.sym("batch"))
    written = onnxsym.annotate(m)
    assert "y" in json.loads({p.key: p.value for p in written.metadata_props}["onnxsym.withheld"])
    (y,) = [o for o in written.graph.output if o.name == "y"]  # its element type and rank; no dim claimed
    assert y.type.tensor_type.elem_type == F and len(y.type.tensor_type.shape.dim) == 2
    assert not any(d.HasField("dim_value") or d.HasField("dim_param") for d in y.type.tensor_type.shape.dim)
    onnx.checker.check_model(written, full_check=True)
    check_written_runs(m, written, [{"batch": 2}, {"batch": 5}], lambda b: {"x": np.ones([3, b["batch"]], np.float32)})


@pytest.mark.parametrize("op", ["Expand", "MatMul"])
def test_a_branch_the_data_pick_that_cannot_run_at_the_pinned_size_is_no_error(op):
    """A Reshape of x to [0, 3] pins n to 3; the then branch of an If on a bool input does
    Expand(x, [1, 5]) or MatMul(x, w[5, 2]), which contradict n = 3: that branch can never run,
    and onnxruntime runs the model with flag false. onnxsym refused the whole model (a
    contradiction raised in a branch that may not run); now it warns, and the written model runs."""
    import numpy as np
    from helpers import BOOL, F, graph, init, model
    from onnx import helper

    N = helper.make_node
    then = {"Expand": N("Expand", ["x", "e5"], ["t"]), "MatMul": N("MatMul", ["x", "w5"], ["t"])}[op]
    then_g = graph([then], [], [("t", F)], name="then")
    else_g = graph([N("Identity", ["x"], ["e"])], [], [("e", F)], name="else")
    m = model([N("Reshape", ["x", "t03"], ["pinned"]), N("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g)],
              [("x", F, ["batch", "n"]), ("flag", BOOL, [])], [("pinned", F), ("y", F)],
              [init("t03", np.array([0, 3], np.int64)), init("e5", np.array([1, 5], np.int64)),
               init("w5", np.ones([5, 2], np.float32))])
    result = onnxsym.infer(m)
    assert any("that subgraph can never run" in w for w in result.warnings), result.warnings
    written = onnxsym.annotate(m)
    check_written_runs(m, written, [{"batch": 2, "n": 3}, {"batch": 5, "n": 3}],
                       lambda b: {"x": np.ones([b["batch"], b["n"]], np.float32), "flag": np.array(False)})


def test_an_input_dim_that_names_nothing_is_written_with_the_name_its_dims_use():
    """paddle2onnx writes ``?`` for an unknown input dim (rapidocr's PP-OCRv4 recognizer:
    ``[p2o.DynamicDimension.0, 3, '?', p2o.DynamicDimension.1]``); a dim may also have neither
    field. Inference names them ``x_d0``, ``x_d2``; the value_info is written over those names,
    so the written input carries them too (the named dims stay as they were), and the written
    model runs with the dims it declares at sizes onnxruntime picks for them."""
    import numpy as np
    from helpers import F, model
    from onnx import helper

    m = model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Flatten", ["r"], ["y"], axis=2)],
              [("x", F, ["?", "c", "n", "?"])], ["y"], opset=17)
    m.graph.input[0].type.tensor_type.shape.dim[2].Clear()  # (neither dim_value nor dim_param)
    written = onnxsym.annotate(m)
    names = [d.dim_param or d.dim_value for d in written.graph.input[0].type.tensor_type.shape.dim]
    assert names == ["x_d0", "c", "x_d2", "x_d3"]
    y = next(o for o in written.graph.output if o.name == "y")
    assert [d.dim_param or d.dim_value for d in y.type.tensor_type.shape.dim] == ["c*x_d0", "x_d2*x_d3"]

    def feeds(b):
        return {"x": np.ones([b["x_d0"], b["c"], b["x_d2"], b["x_d3"]], np.float32)}
    check_written_runs(m, written, [{"x_d0": 2, "c": 3, "x_d2": 5, "x_d3": 7}, {"x_d0": 1, "c": 2, "x_d2": 1, "x_d3": 4}],
                       feeds)


def test_an_stft_onnx_reads_otherwise_than_onnxruntime_costs_only_the_values_before_it():
    """onnx-asr's whisper mel preprocessor (onnxscript): the waveform padded to a fixed length by
    pads computed from its shape, then an STFT of the (batch, length) signal, which onnxruntime's
    kernel takes as real (9 bins of a 16-frame, one-sided) and onnx's inference, once the written
    dims tell it the length, reads as complex (16 bins), refusing them. The signal and the STFT's
    output are written without dims (onnx then infers nothing there, as on the model as given);
    what follows keeps its dims, and the written model runs with them."""
    import numpy as np
    from helpers import F, init, model
    from onnx import helper

    N = helper.make_node
    m = model([N("Shape", ["x"], ["n"], start=1), N("Sub", ["hundred", "n"], ["rest"]),
               N("Concat", ["zeros", "rest"], ["pads"], axis=0), N("Pad", ["x", "pads"], ["padded"]),
               N("STFT", ["padded", "step", "win"], ["s"]), N("ReduceSumSquare", ["s"], ["p"], axes=[-1], keepdims=0),
               N("MatMul", ["p", "mel"], ["y"])],
              [("x", F, ["b", "n"])], ["y"],
              [init("hundred", np.array([100], np.int64)), init("zeros", np.zeros(3, np.int64)),
               init("step", np.array(4, np.int64)), init("win", np.ones(16, np.float32)),
               init("mel", np.ones((9, 5), np.float32))], opset=17)
    from onnxsym.api import written_result

    res = written_result(onnxsym.infer(m))
    assert set(res.withheld) == {"padded", "s"}, res.withheld
    written = onnxsym.write_result(res)
    dims_of = {vi.name: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
               for vi in list(written.graph.value_info) + list(written.graph.output)}
    assert dims_of["p"] == ["b", 22, 9] and dims_of["y"] == ["b", 22, 5]
    onnx.checker.check_model(written, full_check=True)

    def feeds(b):
        return {"x": np.ones([b["b"], b["n"]], np.float32)}
    check_written_runs(m, written, [{"b": 2, "n": 7}, {"b": 1, "n": 100}, {"b": 3, "n": 40}], feeds)
