"""Corners the last attack round on the domain left (tests/domain_attack.py), each held to
onnxruntime run in a child process (a native crash there is no verdict):

- a Scan state that the body broadcasts to another shape ([4, H] against slices [S, 4]): onnxruntime
  feeds states back in buffers of the initial shapes, but at a length of 1 the one output goes to
  the final buffer, shaped as onnx's inference gave the body's output where that is all static: it
  runs there ([4, 1] gives [4, 4]), and the domain allows it (too narrow before); where onnx's
  inference leaves it symbolic ([1, K] against [B, K]), the final buffer is the state's and it is
  refused, as the domain says;

- onnx 1.23's inference gives a 3-D Attention's output a last dim of 0 where V's last dim is not
  static, and onnxruntime's Scan holds its body's outputs to that inference: a Scan over such an
  Attention is refused at every size, and the domain says so (a contradiction);
- Einsum transposes that move two blocks of axes crash onnxruntime on some 0s by no rule found:
  said not stated where a dim may be 0;
- a condition under a guard over a dim onnxsym could not resolve (a Scan input's dim after the
  pieces of a SplitToSequence, one erased, which may differ) was taken as a choice of the data and
  never cut: it is said not stated (with every piece concatenated the dim is resolved: stated).
"""

import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnxsym

pytest.importorskip("onnxruntime")


def _ort_verdicts(m, tries):
    """onnxruntime's verdict at each size of ``tries``: True where it runs."""
    from op_verdicts import feeds

    from onnxsym.model.isolated import Child, Crashed, Refused

    names = [o.name for o in m.graph.output]
    out = []
    with Child() as child:
        try:
            child.load(m.SerializeToString(), {"optimization": "all"})
        except (Refused, Crashed):
            return [False] * len(tries)
        for sizes in tries:
            try:
                child.run(feeds(m, sizes), names)
                out.append(True)
            except (Refused, Crashed):
                out.append(False)
    return out


def _attention_scan(v_last):
    """A 3-D Attention (2 query heads, 1 kv head) on Q [B, S, 8], K [B, T, 4], V [B, T, v_last],
    then a Scan adding each step of its output (axis 1) to a state [B, F]."""
    body = h.make_graph([h.make_node("Add", ["st", "a"], ["t"]), h.make_node("Identity", ["t"], ["st_out"]),
                         h.make_node("Identity", ["t"], ["sc_out"])], "body",
                        [h.make_tensor_value_info("st", T.FLOAT, None), h.make_tensor_value_info("a", T.FLOAT, None)],
                        [h.make_tensor_value_info("st_out", T.FLOAT, None),
                         h.make_tensor_value_info("sc_out", T.FLOAT, None)])
    nodes = [h.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=2, kv_num_heads=1),
             h.make_node("Scan", ["s", "y"], ["s_out", "ys"], body=body, num_scan_inputs=1, scan_input_axes=[1])]
    ins = [("q", ["B", "S", 8]), ("k", ["B", "T", 4]), ("v", ["B", "T", v_last]), ("s", ["B", "F"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in ins],
                     [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("s_out", "ys")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 23)])
    m.ir_version = 10
    return m


def test_scan_over_a_3d_attention_of_a_symbolic_v_is_refused_at_every_size():
    m = _attention_scan("E")
    tries = [{"B": b, "S": s, "T": t, "E": e, "F": 2 * e} for b, s, t, e in
             [(1, 2, 3, 4), (2, 1, 1, 1), (1, 3, 2, 2), (2, 2, 2, 8)]]
    assert not any(_ort_verdicts(m, tries)), "onnxruntime runs it: onnx's inference no longer gives a 0"
    for allow_zero in (False, True):
        with pytest.raises(onnxsym.ShapeContradiction, match="onnx's inference"):
            onnxsym.infer(m, allow_zero=allow_zero).domain()


def test_scan_over_a_3d_attention_of_a_static_v_runs():
    """V's last dim static: onnx's inference gives the output 2 * 4, and the model runs."""
    m = _attention_scan(4)
    tries = [{"B": b, "S": s, "T": t, "F": f} for b, s, t, f in [(1, 2, 3, 8), (2, 1, 1, 8), (1, 2, 2, 3)]]
    runs = _ort_verdicts(m, tries)
    domain = onnxsym.infer(m).domain()
    assert runs == [domain.violated(t) is None for t in tries] == [True, True, False]


def _einsum(eq, shapes):
    ins = [h.make_tensor_value_info(f"x{i}", T.FLOAT, s) for i, s in enumerate(shapes)]
    g = h.make_graph([h.make_node("Einsum", [i.name for i in ins], ["y"], equation=eq)], "g", ins,
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 8
    return m


def _crashes_inside(m, tries, allow_zero=True):
    """The sizes of ``tries`` inside the domain where onnxruntime crashes natively."""
    from op_verdicts import isolated_disagreements

    _n, _bad, crashes = isolated_disagreements(m, tries, allow_zero=allow_zero)
    domain = onnxsym.infer(m, allow_zero=allow_zero).domain()
    return [s for s, _ in crashes if domain.violated(s) is None]


@pytest.mark.parametrize("eq, shapes, tries", [
    ("aabb->ab", [["a", "a", "b", "b"]], [{"a": a, "b": b} for a in (0, 1, 2) for b in (0, 1, 2, 3)]),
    ("ca...->...", [["c", "a", "x", "y"]], [{"c": c, "a": 2, "x": x, "y": 3} for c in (1, 2) for x in (0, 1, 2)]),
])
def test_einsum_two_block_transposes_over_a_zero_are_said_not_stated(eq, shapes, tries):
    """Where a transpose of onnxruntime's Einsum moves two blocks of axes, its kernel crashes
    (SIGFPE) on some 0s inside the domain, by no rule found: the domain says that something is
    not stated for such a node where a dim may be 0, and nothing at dims >= 1."""
    m = _einsum(eq, shapes)
    assert _crashes_inside(m, tries), "onnxruntime no longer crashes there: the line may go"
    zero = onnxsym.infer(m, allow_zero=True).domain()
    assert len(zero.unstated) == 1 and "not stated" in repr(zero) and "Einsum" in zero.unstated_lines()[0]
    assert not onnxsym.infer(m).domain().unstated


def test_einsum_one_axis_moves_say_nothing_unstated():
    """A transpose that moves one axis is stated exactly (a condition): no unstated line."""
    m = _einsum("ay,zy->az", [["a", "y"], ["z", "y"]])
    domain = onnxsym.infer(m, allow_zero=True).domain()
    assert domain.conditions and not domain.unstated


def _split_concat_scan(erase=True):
    """x [A, B, S, C] split on axis 2 into pieces of 2 (the last shorter where S is odd), the last
    piece erased (``erase``: the second piece, which is the last or not as S says, so onnxsym knows the
    items left only alike; the last or the first it knows exactly), the pieces
    concatenated on axis 1, then scanned on axis 2 (with ``erase``, a dim onnxsym cannot resolve:
    the pieces may differ; without, min(S, 2)): onnxruntime moves that axis to the front with its
    transpose kernel, which dies on a 0 after it (C) unless the move is a copy."""
    body = h.make_graph([h.make_node("Identity", ["a"], ["sc"])], "body", [h.make_tensor_value_info("a", T.FLOAT, None)],
                        [h.make_tensor_value_info("sc", T.FLOAT, None)])
    nodes = [h.make_node("SplitToSequence", ["x", "two"], ["q"], axis=2)]
    if erase:
        nodes.append(h.make_node("SequenceErase", ["q", "one"], ["q2"]))
    nodes += [h.make_node("ConcatFromSequence", ["q2" if erase else "q"], ["c"], axis=1),
              h.make_node("Scan", ["c"], ["ys"], body=body, num_scan_inputs=1, scan_input_axes=[2])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["A", "B", "S", "C"])],
                     [h.make_tensor_value_info("ys", T.FLOAT, None)],
                     [h.make_tensor(name="two", data_type=T.INT64, dims=[], vals=[2]),
                      h.make_tensor(name="one", data_type=T.INT64, dims=[], vals=[1])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_a_condition_under_a_guard_over_an_unresolved_dim_is_said_not_stated():
    m = _split_concat_scan()
    tries = [{"A": 1, "B": 2, "S": 4, "C": 0}, {"A": 1, "B": 2, "S": 4, "C": 3}]
    n, bad, crashes = _isolated(m, tries)
    assert [s for s, _ in crashes] == [tries[0]], "onnxruntime no longer crashes at C = 0 (a piece of 2 moved)"
    domain = onnxsym.infer(m, allow_zero=True).domain()
    assert domain.violated(tries[0]) is None  # (the domain cannot state it: the guard's dim is unresolved)
    said = [text for text, src in domain.unstated if src.op_type == "Scan" and "moved from axis 2" in src.reason]
    assert said and "could not resolve" in said[0] and "C >= 1" in said[0]
    assert not any("moved from axis 2" in c.describe() for c in domain.conditions)


def test_the_scan_of_concatenated_pieces_of_a_split_states_its_condition():
    """Without the erase the pieces' dim is min(S, 2), resolved: the condition on C is stated."""
    m = _split_concat_scan(erase=False)
    tries = [{"A": 1, "B": 2, "S": 4, "C": 0}, {"A": 1, "B": 2, "S": 4, "C": 3}]
    n, bad, crashes = _isolated(m, tries)
    assert [s for s, _ in crashes] == [tries[0]], "onnxruntime no longer crashes at C = 0 (a piece of 2 moved)"
    domain = onnxsym.infer(m, allow_zero=True).domain()
    assert domain.violated(tries[0]) is not None and domain.violated(tries[1]) is None


def _isolated(m, tries):
    from op_verdicts import isolated_disagreements

    return isolated_disagreements(m, tries, allow_zero=True)


def _scan_state(state, xs):
    """A Scan adding each slice of x (axis 0) to the state: state output and scan output the sum."""
    body = h.make_graph([h.make_node("Add", ["st", "a"], ["t"]), h.make_node("Identity", ["t"], ["so"]),
                         h.make_node("Identity", ["t"], ["sc"])], "body",
                        [h.make_tensor_value_info("st", T.FLOAT, None), h.make_tensor_value_info("a", T.FLOAT, None)],
                        [h.make_tensor_value_info("so", T.FLOAT, None), h.make_tensor_value_info("sc", T.FLOAT, None)])
    g = h.make_graph([h.make_node("Scan", ["s", "x"], ["s_out", "ys"], body=body, num_scan_inputs=1)], "g",
                     [h.make_tensor_value_info("s", T.FLOAT, state), h.make_tensor_value_info("x", T.FLOAT, xs)],
                     [h.make_tensor_value_info("s_out", T.FLOAT, None), h.make_tensor_value_info("ys", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _grid(**axes):
    import itertools

    names = sorted(axes)
    return [dict(zip(names, v)) for v in itertools.product(*(axes[n] for n in names))]


@pytest.mark.parametrize("state, xs, grid, runs, refused", [
    # onnx infers the body's state output [4, 4] (static): at one step a state [4, 1] grows
    ([4, "H"], ["L", "S", 4], _grid(H=[1, 2, 4], L=[1, 2, 3], S=[1, 4]), {"H": 1, "L": 1, "S": 4},
     {"H": 1, "L": 2, "S": 4}),
    # onnx infers [B, K] (symbolic): the final buffer is the state's, refused at every length
    ([1, "K"], ["L", "B", "K"], _grid(K=[4], L=[1, 2], B=[1, 2]), {"K": 4, "L": 1, "B": 1},
     {"K": 4, "L": 1, "B": 2}),
    (["A", "H"], ["L", "S", 4], _grid(A=[1, 4], H=[1, 4], L=[1, 2], S=[1, 4]), {"A": 4, "H": 4, "L": 1, "S": 4},
     {"A": 4, "H": 1, "L": 1, "S": 4}),
])
def test_scan_state_that_grows_at_one_step(state, xs, grid, runs, refused):
    n, bad, crashes = _isolated(_scan_state(state, xs), grid)
    assert not bad, f"{len(bad)} of {n} sizes disagree:\n" + "\n".join(bad[:10])
    domain = onnxsym.infer(_scan_state(state, xs), allow_zero=True).domain()
    assert domain.violated(runs) is None and domain.violated(refused) is not None
