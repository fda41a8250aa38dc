"""What tests/domain_attack.py found (random chains of the newer ops on graph inputs whose dims
are symbols, one symbol at a time moved to 0..8), each model held to onnxruntime in a child
process (a native crash there is no verdict, and is listed):

- STFT with a window of length 0 (or a frame_length of 0): onnxruntime's kernel divides by the
  frame length and dies of SIGFPE; the domain allowed it. Now the frame length is >= 1;
- a Scan whose length may be 0 (allow_zero): its body was inferred on widened states under a
  guard, and what it needs of the states (a broadcast against a slice) was dropped; onnxruntime
  refuses a scan of no step, so where the domain holds the body runs on the initial states;
- Einsum with a 0 in an operand that onnxruntime transposes by moving one axis (``ay,zy->az``
  at y 0 and z not 1; ``aby,bzy->abz`` at b 0): its kernel crashes (SIGFPE); now refused there;
- a Scan input scanned on an axis other than 0, moved to the front by that kernel over a 0 after
  it ([2, 3, 0] on axis 1): it crashes too; now refused there; so is a scan output stacked on an
  axis other than 0 (moved there from 0 by the same kernel) and an Einsum diagonal's transposes
  (``bib->bi`` at b 0, i not 1);
- once left as found, now in tests/test_domain_corners.py: a Scan over a 3-D Attention whose V's
  last dim is a symbol (onnx 1.23's inference gives the output's last dim 0, and onnxruntime's
  Scan holds its body's outputs to that inference: refused at every size, now a contradiction);
  the Einsum transposes that move two blocks of axes over a 0 (``aabb->ab`` at a 0, ``ca...->...``
  at an ellipsis dim 0: said not stated); and a Scan state the body broadcasts to another shape,
  which onnxruntime runs at a length of 1 where onnx's inference gives the body's output a static
  shape (now allowed there);
- and the attack itself, with fixed seeds: no size the domain allows that onnxruntime refuses,
  none it refuses that onnxruntime runs with the inferred shapes, no dim other than
  onnxruntime's.
"""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from op_verdicts import _outside, isolated_disagreements

import onnxsym

pytest.importorskip("onnxruntime")


def _model(nodes, inputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _grid(**axes):
    import itertools

    names = sorted(axes)
    return [dict(zip(names, v)) for v in itertools.product(*(axes[n] for n in names))]


def _agrees(m, tries, crashes_outside=True):
    n, bad, crashes = isolated_disagreements(m, tries, allow_zero=True)
    assert not bad, f"{len(bad)} of {n} sizes disagree:\n" + "\n".join(bad[:10])
    domain = onnxsym.infer(m, allow_zero=True).domain()
    inside = [s for s, _ in crashes if _outside(domain, s) is None]
    assert not (crashes_outside and inside), f"onnxruntime crashes inside the domain at {inside}"
    return crashes


@pytest.mark.parametrize("onesided", [0, 1])
def test_stft_window_of_length_zero_is_outside(onesided):
    """A window of 0 (no frame_length): onnxruntime crashes (SIGFPE); 1 up to the signal runs."""
    m = _model([h.make_node("STFT", ["s", "st", "w"], ["y"], onesided=onesided)],
               [("s", T.FLOAT, ["b", "n", 1]), ("w", T.FLOAT, ["k"])], [("st", np.array(1, np.int64))])
    crashes = _agrees(m, _grid(b=[1], n=[0, 1, 3], k=[0, 1, 2, 3, 4]))
    assert crashes, "onnxruntime no longer crashes at a window of 0: the condition may be looser"
    assert onnxsym.infer(m, allow_zero=True).domain().violated({"b": 1, "n": 3, "k": 0}) is not None


def test_stft_frame_length_zero_runs_at_no_size():
    m = _model([h.make_node("STFT", ["s", "st", "", "fl"], ["y"])], [("s", T.FLOAT, ["b", "n", 1])],
               [("st", np.array(1, np.int64)), ("fl", np.array(0, np.int64))])
    with pytest.raises(onnxsym.ShapeContradiction, match="frame length 0"):
        onnxsym.infer(m)


def _scan_add(state, xs, second=None):
    """Scan adding each slice of x (on axis 0) and of ``second`` (on axis 1) to the state: the sum is
    the new state and the scan output."""
    nodes = [h.make_node("Add", ["st", "a"], ["t"])]
    body_in = [h.make_tensor_value_info("st", T.FLOAT, None), h.make_tensor_value_info("a", T.FLOAT, None)]
    if second:
        nodes.append(h.make_node("Add", ["t", "b"], ["t2"]))
        body_in.append(h.make_tensor_value_info("b", T.FLOAT, None))
    last = nodes[-1].output[0]
    body = h.make_graph(nodes + [h.make_node("Identity", [last], ["so"]), h.make_node("Identity", [last], ["sc"])],
                        "body", body_in,
                        [h.make_tensor_value_info("so", T.FLOAT, None), h.make_tensor_value_info("sc", T.FLOAT, None)])
    ins = [h.make_tensor_value_info("s", T.FLOAT, state), h.make_tensor_value_info("x", T.FLOAT, xs)]
    if second:
        ins.append(h.make_tensor_value_info("x2", T.FLOAT, second))
    g = h.make_graph([h.make_node("Scan", [i.name for i in ins], ["y", "z"], body=body, num_scan_inputs=len(ins) - 1,
                                  scan_input_axes=[0, 1][:len(ins) - 1])], "g", ins,
                     [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("z", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("second", [None, ["k", 1, 3]])
def test_scan_body_needs_of_the_state_hold_where_the_length_may_be_zero(second):
    """A scan length that may be 0 (allow_zero): onnxruntime refuses a scan of no step, so the body
    runs wherever the domain holds, on the initial state's shape. The body's Add needs the state's
    dims to broadcast with the slices' (it was inferred on a widened state under a guard, and the
    condition on S was dropped where a second scan input makes the length 1: too wide at S = 2, 4)."""
    m = _scan_add([4, "S"], ["L", 4, 3], second)
    grid = _grid(S=[0, 2, 3, 4], L=[0, 1, 2], **({"k": [4]} if second else {}))
    _agrees(m, grid)
    domain = onnxsym.infer(m, allow_zero=True).domain()
    at = {"k": 4, "L": 1} if second else {"L": 2}
    assert domain.violated(dict(at, S=2)) is not None and domain.violated(dict(at, S=3)) is None


def _einsum(eq, shapes):
    ins = [h.make_tensor_value_info(f"x{i}", T.FLOAT, s) for i, s in enumerate(shapes)]
    g = h.make_graph([h.make_node("Einsum", [i.name for i in ins], ["y"], equation=eq)], "g", ins,
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("eq, shapes, crashes", [
    ("ay,zy->az", [["a", "y"], ["z", "y"]], True),
    ("...y,zy", [["b", "a", "y"], ["z", "y"]], True),
    ("zy,ay->az", [["z", "y"], ["a", "y"]], True),
    ("aby,bzy->abz", [["a", "b", "y"], ["b", "z", "y"]], True),
    ("abc,cab->abc", [["a", "b", "c"], ["c", "a", "b"]], True),
    ("ij,jk,lk->il", [["i", "j"], ["j", "k"], ["l", "k"]], True),
    ("ab->ba", [["a", "b"]], False),
    ("ij,jk->ik", [["i", "y"], ["y", "k"]], False),
    ("bij,bjk->bik", [["b", "i", "y"], ["b", "y", "k"]], False),
    ("ay,y->a", [["a", "y"], ["y"]], False),
    ("abc,bca->a", [["a", "b", "c"], ["b", "c", "a"]], True),
    ("abc,cba->a", [["a", "b", "c"], ["c", "b", "a"]], False),
])
def test_einsum_zero_in_an_operand_transposed_by_moving_one_axis(eq, shapes, crashes):
    """onnxruntime transposes each operand to one order of the labels (the ellipsis' dims, then the
    letters as first met). A transpose moving one axis alone, where it is not a copy (that axis not
    1, nor all it moves past), divides by the moved dim and every dim it does not move past: a 0
    there dies of SIGFPE (``ay,zy->az`` at y 0, z 2; at z 1 it runs). Other moves, and none, run.
    Checked against onnxruntime at 0, 1, 2 of each dim: no size refused that runs, none allowed
    that crashes."""
    m = _einsum(eq, shapes)
    names = sorted({d for s in shapes for d in s})
    found = _agrees(m, _grid(**{n: [0, 1, 2] for n in names}))
    assert bool(found) == crashes, found


@pytest.mark.parametrize("eq, crashes", [("bib->bi", True), ("cbib->cbi", True), ("bicb->bic", True),
                                         ("biib->bi", True), ("iib->ib", False), ("bii->bi", False),
                                         ("abca->bc", True), ("bib,bj->ij", True)])
def test_einsum_diagonal_transposes_over_a_zero(eq, crashes):
    """onnxruntime takes a repeated letter's diagonal by transposing the pair innermost (the
    others in order) and back; each transpose that moves one axis alone and is not a copy divides
    by the moved dim and every dim it does not move past, and dies of SIGFPE on a 0 there
    (``bib->bi`` at b 0 and i not 1; ``iib`` swaps no single axis and runs). Checked
    against onnxruntime at 0, 1, 2 of each dim: no size refused that runs, none allowed that crashes."""
    terms = eq.split("->")[0].split(",")
    m = _einsum(eq, [list(t) for t in terms])
    found = _agrees(m, _grid(**{n: [0, 1, 2] for n in sorted({c for t in terms for c in t})}))
    assert bool(found) == crashes, found


def test_einsum_diagonal_of_a_moved_axis_of_one_runs():
    domain = onnxsym.infer(_einsum("bib->bi", [["b", "i", "b"]]), allow_zero=True).domain()
    assert _outside(domain, dict(b=0, i=1)) is None
    assert _outside(domain, dict(b=0, i=2)) is not None


def test_einsum_moved_axis_of_one_is_a_copy():
    """``ay,zy->az`` at y 0: z 1 makes the transpose a copy (runs), z 2 a move (crashes); the
    domain allows the first and refuses the second (the rule before refused both)."""
    domain = onnxsym.infer(_einsum("ay,zy->az", [["a", "y"], ["z", "y"]]), allow_zero=True).domain()
    assert _outside(domain, dict(a=2, y=0, z=1)) is None
    assert _outside(domain, dict(a=2, y=0, z=2)) is not None


def _scan_identity(axis, rank=3, out_axis=0):
    body = h.make_graph([h.make_node("Identity", ["s"], ["o"])], "body", [h.make_tensor_value_info("s", T.FLOAT, None)],
                        [h.make_tensor_value_info("o", T.FLOAT, None)])
    x = h.make_tensor_value_info("x", T.FLOAT, [f"d{i}" for i in range(rank)])
    g = h.make_graph([h.make_node("Scan", ["x"], ["y"], body=body, num_scan_inputs=1, scan_input_axes=[axis],
                                  scan_output_axes=[out_axis])], "g",
                     [x], [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("axis", [1, 2, -1])
def test_scan_input_axis_moved_over_a_zero(axis):
    """A scan axis other than 0 is moved to the front by onnxruntime's transpose kernel: a copy
    where that axis or all dims before it are 1; else it divides by the dims after it and dies
    of SIGFPE on a 0 there ([2, 3, 0] on axis 1; [1, 3, 0] runs, a copy). The domain refuses
    exactly those: checked against onnxruntime at 0, 1, 2 of each dim."""
    m = _scan_identity(axis)
    found = _agrees(m, _grid(d0=[0, 1, 2], d1=[0, 1, 2], d2=[0, 1, 2]))
    assert found  # (and each outside the domain: _agrees)


@pytest.mark.parametrize("rank, axis, out_axis", [(2, 0, 1), (2, 1, 1), (3, 0, 1), (3, 0, 2), (3, 1, 1), (3, 2, 1),
                                                   (3, 2, 2), (3, 1, -1)])
def test_scan_output_axis_moved_over_a_zero(rank, axis, out_axis):
    """onnxruntime stacks a scan output on axis 0 and moves it to its axis with its transpose
    kernel: where that moves one axis alone and is not a copy, it divides by the moved dim and
    every dim it does not move past, and dies of SIGFPE on a 0 there (a [0] slice over 2 steps
    stacked on axis 1; over 1 step, a copy, it runs; stacked last in rank 3 it moves the length,
    >= 1, and runs). The domain refuses exactly those (with the scan input's own move): checked
    against onnxruntime at 0, 1, 2 of each dim."""
    m = _scan_identity(axis, rank, out_axis)
    found = _agrees(m, _grid(**{f"d{i}": [0, 1, 2] for i in range(rank)}))
    assert bool(found) == ((rank, axis, out_axis) != (3, 0, 2))  # (and each outside the domain: _agrees)


def test_scan_output_of_one_step_is_a_copy():
    domain = onnxsym.infer(_scan_identity(0, 2, 1), allow_zero=True).domain()
    assert _outside(domain, dict(d0=1, d1=0)) is None
    assert _outside(domain, dict(d0=2, d1=0)) is not None


def _attack(count, seed):
    from tests.domain_attack import run

    tally = run(count, seed)
    assert tally["tries"] > 10 * count, tally  # (the chains run: most are judged at many sizes)
    bad = {k: tally[k] for k in ("too_wide", "too_narrow", "wrong", "onnxsym error") if tally[k]}
    assert not bad, f"{bad} (python -m tests.domain_attack --count {count} --seed {seed} --show)"


def test_the_attack_finds_nothing_fast_slice():
    _attack(4, 100)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_attack_finds_nothing(seed):
    _attack(150, seed)


# tests/value_attack.py: annotate --value (and dynamic) on models where the value reaches shapes;
# the written model, fed other values and sizes, computes what the given one does


def _value_attack(count, seed):
    from tests.value_attack import run

    tally = run(count, seed)
    assert tally["tries"] > 10 * count, tally
    bad = {k: tally[k] for k in ("written refuses", "outputs differ", "onnxsym error") if tally[k]}
    assert not bad, f"{bad} (python -m tests.value_attack --count {count} --seed {seed} --show)"


def test_the_value_attack_finds_nothing_fast_slice():
    _value_attack(8, 100)


@pytest.mark.slow
def test_the_value_attack_finds_nothing():
    _value_attack(200, 0)


# real exports: torch's dynamo exporter at opset 23 emits Attention and RMSNormalization, with a
# dynamic batch and sequence; the domain is held to onnxruntime at 0..8 of each


def _torch_modules():
    import torch

    class Attn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = torch.nn.Linear(16, 16), torch.nn.Linear(16, 8), torch.nn.Linear(16, 8)

        def forward(self, x):
            b, t, _ = x.shape
            q = self.q(x).view(b, t, 4, 4).transpose(1, 2)
            k = self.k(x).view(b, t, 2, 4).transpose(1, 2).repeat_interleave(2, 1)
            v = self.v(x).view(b, t, 2, 4).transpose(1, 2).repeat_interleave(2, 1)
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    class Norm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.n = torch.nn.RMSNorm(16)

        def forward(self, x):
            return self.n(x)

    return {"Attention": Attn(), "RMSNormalization": Norm()}


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.parametrize("op", ["Attention", "RMSNormalization"])
def test_dynamo_exports_at_opset_23(op):
    pytest.importorskip("onnxscript")
    torch = pytest.importorskip("torch")
    import warnings

    from tests.domain_attack import judge

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq")
        m = torch.onnx.export(_torch_modules()[op], (torch.randn(2, 5, 16),), dynamo=True, opset_version=23,
                              dynamic_shapes={"x": {0: batch, 1: seq}}, input_names=["x"], verbose=False).model_proto
    assert op in {n.op_type for n in m.graph.node}
    binding = {d.dim_param: v for d, v in zip(m.graph.input[0].type.tensor_type.shape.dim, (2, 5, 16)) if d.dim_param}
    assert set(binding) == {"batch", "seq"}
    r = judge(m, binding)
    assert r["verdict"] == "agrees" and r["tries"] == 14, r  # (the sizes as exported, and 13 moves)
