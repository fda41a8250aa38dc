"""A shape on every value inside If branches, the branches that never run at the sizes seen
included, and on the values they read: written wherever onnxruntime loads the result, and each
one what onnxruntime computes when that branch runs.

The check: every If branch (nested ones too) is cut out as a model of its own whose inputs are the
outer values it reads, fed with what the model computed for them at a size, and run in
onnxruntime with every value exposed; each dim written into the branch's value_info must be the
real one. A branch that fails on those values (it never runs there) is not held to anything.
"""

import os

import numpy as np
import onnx
import pytest
from helpers import model
from onnx import TensorProto, helper, numpy_helper
from oracle import _evaluate_written, check_written_runs, session_of, written_dims
from resolution import REAL

import onnxsym

pytest.importorskip("onnxruntime")


def _outer_reads(graph):
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer} | \
        {o for n in graph.node for o in n.output}
    reads = []
    for n in graph.node:
        names = list(n.input)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                names += _outer_reads(a.g)
        reads += [x for x in names if x and x not in defined and x not in reads]
    return reads + [o.name for o in graph.output if o.name not in defined and o.name not in reads]


def _run_exposed(graph, env, opsets, ir_version):
    """Run ``graph`` (inputs: the outer values it reads, from ``env``) with every node output exposed."""
    g = onnx.GraphProto()
    g.CopyFrom(graph)
    del g.input[:], g.output[:], g.value_info[:]
    reads = [i.name for i in graph.input] + _outer_reads(graph)
    for name in reads:
        arr = np.asarray(env[name])
        g.input.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype), None))
    for n in graph.node:
        for o in n.output:
            if o:
                g.output.append(onnx.ValueInfoProto(name=o))
    m = helper.make_model(g, opset_imports=opsets, ir_version=ir_version)
    sess = session_of(m, optimize=False)
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, {k: np.asarray(env[k]) for k in reads})))


def _constants(graph):
    return {t.name: numpy_helper.to_array(t) for t in graph.initializer}


def check_branches(annotated, feeds, binding):
    """Hold every If branch's written value_info to onnxruntime's run of it; returns (dims
    checked, branches that ran)."""
    main = _run_exposed(annotated.graph, feeds, annotated.opset_import, annotated.ir_version)
    env = {**feeds, **_constants(annotated.graph), **main}
    checked = ran = 0

    def walk(graph, env):
        nonlocal checked, ran
        for n in graph.node:
            if n.op_type != "If":
                continue
            for a in n.attribute:
                branch = a.g
                try:
                    got = _run_exposed(branch, env, annotated.opset_import, annotated.ir_version)
                except Exception:  # noqa: BLE001 - the branch cannot run on these values: nothing to hold it to
                    continue
                ran += 1
                for vi in list(branch.value_info) + list(branch.output):
                    if vi.name not in got or not vi.type.tensor_type.HasField("shape"):
                        continue
                    real = np.shape(got[vi.name])
                    written = written_dims(vi)
                    assert len(written) == len(real), f"'{vi.name}' in {n.name}.{a.name}: written {written}, real {real}"
                    for text, r in zip(written, real):
                        value = _evaluate_written(text, binding)
                        if value is not None:
                            assert value == r, f"'{vi.name}' in {n.name}.{a.name} at {binding}: written {written}, real {real}"
                            checked += 1
                walk(branch, {**env, **_constants(branch), **got})

    walk(annotated.graph, env)
    return checked, ran


def _unshaped_inside(m):
    count = 0

    def walk(g):
        nonlocal count
        shaped = {v.name for v in list(g.value_info) + list(g.output) if v.type.tensor_type.HasField("shape")}
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    inner = shaped | {v.name for v in list(a.g.value_info) + list(a.g.output)
                                      if v.type.tensor_type.HasField("shape")}
                    count += sum(o not in inner for m_ in a.g.node for o in m_.output if o)
                    walk(a.g)

    walk(m.graph)
    return count


# ---------------------------------------------------------------- a branch the given value rules out

def _flag_model():
    """If on a bool input: then halves x's rows by a Slice, else reshapes x to [2, n*d/2] via
    shape arithmetic and transposes it. Both are valid, and either runs depending on the flag."""
    then_nodes = [
        helper.make_node("Shape", ["x"], ["t_shape"]),
        helper.make_node("Gather", ["t_shape", "zero"], ["t_rows"], axis=0),
        helper.make_node("Div", ["t_rows", "two"], ["t_half"]),
        helper.make_node("Unsqueeze", ["t_half", "axes0"], ["t_end"]),
        helper.make_node("Slice", ["x", "start0", "t_end", "axes0"], ["t_sliced"]),
        helper.make_node("Relu", ["t_sliced"], ["t_out"]),
    ]
    else_nodes = [
        helper.make_node("Shape", ["y"], ["e_shape"]),
        helper.make_node("ReduceProd", ["e_shape"], ["e_count"], keepdims=1),
        helper.make_node("Div", ["e_count", "two1"], ["e_half"]),
        helper.make_node("Concat", ["two1", "e_half"], ["e_target"], axis=0),
        helper.make_node("Reshape", ["y", "e_target"], ["e_flat"]),
        helper.make_node("Transpose", ["e_flat"], ["e_t"], perm=[1, 0]),
        helper.make_node("Neg", ["e_t"], ["e_out"]),
    ]
    out = helper.make_tensor_value_info
    then_g = helper.make_graph(then_nodes, "then", [], [out("t_out", TensorProto.FLOAT, None)])
    else_g = helper.make_graph(else_nodes, "else", [], [out("e_out", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["y"]),
        helper.make_node("If", ["flag"], ["r"], then_branch=then_g, else_branch=else_g),
    ]
    inits = [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
             helper.make_tensor("two", TensorProto.INT64, [], [2]),
             helper.make_tensor("two1", TensorProto.INT64, [1], [2]),
             helper.make_tensor("axes0", TensorProto.INT64, [1], [0]),
             helper.make_tensor("start0", TensorProto.INT64, [1], [0])]
    return model(nodes, [out("x", TensorProto.FLOAT, ["n", 6]), out("flag", TensorProto.BOOL, [])],
                 [out("r", TensorProto.FLOAT, None)], inits)


@pytest.mark.parametrize("flag", [True, False])
def test_the_branch_a_given_value_rules_out_is_shaped_and_right_when_it_runs(flag):
    m = _flag_model()
    annotated = onnxsym.annotate(m, values={"flag": flag})
    assert _unshaped_inside(annotated) == 0  # both branches, the one never taken too
    assert _unshaped_inside(onnxsym.annotate(m)) == 0  # (the data pick: both inferred anyway)
    total = 0
    for n in (2, 4, 10):
        for run_flag in (True, False):  # the untaken branch run by the other flag, checked
            feeds = {"x": np.random.default_rng(n).standard_normal((n, 6)).astype(np.float32),
                     "flag": np.array(run_flag)}
            checked, ran = check_branches(annotated, feeds, {"n": n})
            assert ran == 2
            total += checked
    assert total > 20


def test_the_values_a_branch_never_taken_reads_are_written():
    m = _flag_model()
    annotated = onnxsym.annotate(m, values={"flag": True})
    y = [vi for vi in annotated.graph.value_info if vi.name == "y"]  # read by the else branch only
    assert y and written_dims(y[0]) == ["n", 6]
    feeds = lambda b: {"x": np.ones((b["n"], 6), np.float32), "flag": np.array(True)}
    assert check_written_runs(m, annotated, [{"n": 2}, {"n": 8}], feeds) > 0


# ---------------------------------------------------------------- real models

def _vad_feeds(binding, sr):
    rng = np.random.default_rng(binding["batch"])
    return {"input": rng.standard_normal((binding["batch"], binding["samples"])).astype(np.float32),
            "state": np.zeros((2, binding["batch"], 128), np.float32), "sr": np.array(sr, np.int64)}


@pytest.mark.parametrize("name", ["silero_vad", "silero_vad_16k_op15"])
def test_silero_vad_branches_are_shaped_and_right(name):
    m = onnx.load(f"models/real/{name}.onnx")
    annotated = onnxsym.annotate(m)
    onnx_unshaped = _unshaped_inside(onnx.shape_inference.infer_shapes(m))
    assert _unshaped_inside(annotated) <= onnx_unshaped  # at least as shaped as onnx's own inference
    inputs = {i.name for i in m.graph.input}
    total = ran_total = 0
    for binding, sr in [({"batch": 1, "samples": 512}, 16000), ({"batch": 3, "samples": 512}, 16000),
                        ({"batch": 2, "samples": 256}, 8000)]:
        feeds = {k: v for k, v in _vad_feeds(binding, sr).items() if k in inputs}
        session_of(annotated).run(None, feeds)  # the written model loads and runs
        checked, ran = check_branches(annotated, feeds, binding)
        total += checked
        ran_total += ran
    assert total > 100 and ran_total > 4


def _with_subgraphs():
    from resolution import corpus

    out = []
    for e in corpus(fetched=False):
        m = onnx.load(e["path"], load_external_data=False)
        if any(n.op_type in ("If", "Loop", "Scan") for n in m.graph.node):
            out.append(e)
    return out


@pytest.mark.parametrize("entry", _with_subgraphs(), ids=lambda e: e["name"])
def test_real_models_with_subgraphs_load_run_and_their_branches_are_right(entry):
    """Every shipped model with a subgraph: the written model loads and runs in onnxruntime at the
    manifest's sizes, every dim written on a main-graph value and inside every If branch is the
    real one, and so is every dim written in a main-graph Loop's body at each iteration; and no
    value inside a subgraph is left unshaped where onnx's inference shapes it."""
    from resolution import feeds_for

    m = onnx.load(entry["path"])
    annotated = onnxsym.annotate(m)
    assert _unshaped_inside(annotated) <= _unshaped_inside(onnx.shape_inference.infer_shapes(m))
    sizes = entry["sizes"]
    feeds = lambda b: feeds_for(m, b, entry.get("feeds"))
    check_written_runs(m, annotated, sizes, feeds)
    for binding in sizes:
        check_branches(annotated, feeds(binding), binding)
        check_loop_bodies(annotated, feeds(binding), binding)


# ---------------------------------------------------------------- Loop bodies, iteration by iteration

def _held(graph, got, binding, where):
    checked = 0
    for vi in list(graph.value_info) + list(graph.output):
        if vi.name not in got or not vi.type.tensor_type.HasField("shape"):
            continue
        real, written = np.shape(got[vi.name]), written_dims(vi)
        assert len(written) == len(real), f"'{vi.name}' in {where}: written {written}, real {real}"
        for text, r in zip(written, real):
            value = _evaluate_written(text, binding)
            if value is not None:
                assert value == r, f"'{vi.name}' in {where} at {binding}: written {written}, real {real}"
                checked += 1
    return checked


def check_loop_bodies(annotated, feeds, binding, most=6):
    """Run each main-graph Loop's body as a model of its own, iteration after iteration (its
    carried outputs fed back), holding every dim written in the body (outputs too) to each run."""
    g = annotated.graph
    env = {**feeds, **_constants(g), **_run_exposed(g, feeds, annotated.opset_import, annotated.ir_version)}
    checked = 0
    for n in g.node:
        if n.op_type != "Loop":
            continue
        body = next(a.g for a in n.attribute if a.name == "body")
        trip = int(env[n.input[0]]) if n.input[0] else most
        carried = [env[x] for x in n.input[2:]]
        for it in range(min(trip, most)):
            inner = {**env, **_constants(body), body.input[0].name: np.array(it, np.int64),
                     body.input[1].name: np.array(True), **{b.name: c for b, c in zip(body.input[2:], carried)}}
            got = _run_exposed(body, inner, annotated.opset_import, annotated.ir_version)
            checked += _held(body, got, binding, f"{n.name} iteration {it}")
            got = {**inner, **got}  # (an output may be an input or an outer value, passed on)
            carried = [got[o.name] for o in body.output[1:1 + len(carried)]]
            if not bool(got[body.output[0].name]):
                break
    return checked


def _loop_model():
    """Loop M = n times over a carried row that grows by one element each iteration and a sum
    of fixed shape [d], with a scan output of [d] per iteration."""
    out = helper.make_tensor_value_info
    body = helper.make_graph([
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Concat", ["grow_in", "one_f"], ["grow_out"], axis=0),
        helper.make_node("Add", ["acc_in", "row"], ["acc_out"]),
        helper.make_node("Mul", ["acc_out", "acc_out"], ["sq"]),
    ], "body", [out("i", TensorProto.INT64, []), out("cond_in", TensorProto.BOOL, []),
                out("grow_in", TensorProto.FLOAT, None), out("acc_in", TensorProto.FLOAT, None)],
        [out("cond_out", TensorProto.BOOL, None), out("grow_out", TensorProto.FLOAT, None),
         out("acc_out", TensorProto.FLOAT, None), out("sq", TensorProto.FLOAT, None)],
        [helper.make_tensor("one_f", TensorProto.FLOAT, [1], [1.0])])
    nodes = [helper.make_node("Shape", ["x"], ["xs"]),
             helper.make_node("Gather", ["xs", "zero"], ["trip"], axis=0),
             helper.make_node("ReduceSum", ["x", "axes0"], ["row"], keepdims=0),
             helper.make_node("Loop", ["trip", "", "seed", "acc0"], ["grown", "acc", "sqs"], body=body)]
    inits = [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
             helper.make_tensor("axes0", TensorProto.INT64, [1], [0]),
             helper.make_tensor("seed", TensorProto.FLOAT, [1], [0.0])]
    return model(nodes, [out("x", TensorProto.FLOAT, ["n", "d"]), out("acc0", TensorProto.FLOAT, ["d"])],
                 [out("grown", TensorProto.FLOAT, None), out("acc", TensorProto.FLOAT, None),
                  out("sqs", TensorProto.FLOAT, None)], inits)


def test_a_loop_bodys_outputs_are_written_where_every_iteration_computes_them():
    m = _loop_model()
    annotated = onnxsym.annotate(m)
    body = next(n for n in annotated.graph.node if n.op_type == "Loop").attribute[0].g
    shaped = {o.name: written_dims(o) for o in body.output if o.type.tensor_type.HasField("shape")}
    assert shaped.get("acc_out") == ["d"] and shaped.get("sq") == ["d"] and shaped.get("cond_out") == []
    assert "grow_out" not in shaped  # one more element each iteration: no one shape to write
    total = 0
    for n, d in ((1, 3), (4, 2), (5, 7)):
        rng = np.random.default_rng(n)
        feeds = {"x": rng.standard_normal((n, d)).astype(np.float32), "acc0": np.zeros(d, np.float32)}
        total += check_loop_bodies(annotated, feeds, {"n": n, "d": d})
        session_of(annotated).run(None, feeds)
    assert total >= 10


def _unshaped_in_subgraphs(m):
    """(value, graph depth) of every value produced inside an If/Loop/Scan body, or produced outside
    and read inside, that ``m`` declares no shape for where it is visible."""
    out = set()

    def shaped(graph, into):
        into |= {vi.name for vi in [*graph.value_info, *graph.output]
                 if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")}

    def walk(graph, seen, depth):
        seen = set(seen)
        shaped(graph, seen)
        produced = {o for n in graph.node for o in n.output if o}
        for n in graph.node:
            for a in n.attribute:
                for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    inner = set(seen)
                    shaped(g, inner)
                    out.update((i, depth) for m_ in g.node for i in m_.input if i in produced and i not in seen)
                    out.update((o, depth + 1) for m_ in g.node for o in m_.output if o and o not in inner)
                    walk(g, seen, depth + 1)

    walk(m.graph, set(), 0)
    return out


@pytest.mark.parametrize("name", ["silero_vad_16k_op15", "onnxscript_loop_if", "onnxscript_while",
                                  "onnxscript_loop_grow", "onnxscript_loop_row_sum"])
def test_the_drop_in_shapes_every_subgraph_value_onnx_shapes(name):
    # (issue 37: TensorRT's EP and ORT's fusions read them; the dims themselves are held to
    # onnxruntime by the tests above)
    pytest.importorskip("sympy")
    from onnxsym.ort_compat import SymbolicShapeInference

    m = onnx.load(os.path.join(REAL, f"{name}.onnx"))
    ours = _unshaped_in_subgraphs(SymbolicShapeInference.infer_shapes(m))
    theirs = _unshaped_in_subgraphs(onnx.shape_inference.infer_shapes(m))
    assert ours <= theirs, sorted(ours - theirs)
