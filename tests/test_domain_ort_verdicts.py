"""The domain of Attention, RMSNormalization, RotaryEmbedding and GroupNormalization against
onnxruntime's run/refuse verdict (issue 34): on onnx's backend node cases with every graph-input
dim a symbol, each symbol moved to 1, 2, 3, its own + 1 and twice its own, and on hand-built
grids across each condition's boundary. onnxruntime runs exactly where the domain holds, and
there with the inferred output shapes."""

import itertools
import warnings

import pytest
from onnx import TensorProto as T
from onnx import helper as h
from op_verdicts import disagreements, moves, symbolic

pytest.importorskip("onnxruntime")


def _cases(prefix):
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c.name: c for c in collect_testcases() if c.name.startswith(prefix) and "expanded" not in c.name}


def _backend(prefix):
    cases = _cases(prefix)
    assert cases, prefix
    return sorted(cases), cases


def _check_case(case, extra=None):
    m, own = symbolic(case.model)
    data = dict(zip((i.name for i in case.model.graph.input), case.data_sets[0][0])) if case.data_sets else None
    n, bad = disagreements(m, list(moves(own, extra)), data)
    assert n and not bad, f"{case.name}: {len(bad)} of {n} tries disagree:\n" + "\n".join(bad[:10])


def _model(nodes, inputs, outputs, opset):
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info(*i) for i in inputs],
                                  [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs]),
                     opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def _grid(**axes):
    names = sorted(axes)
    return [dict(zip(names, v)) for v in itertools.product(*(axes[n] for n in names))]


def _agrees(m, grid):
    n, bad = disagreements(m, grid)
    assert not bad, f"{len(bad)} of {n} sizes disagree:\n" + "\n".join(bad[:10])


# --------------------------------------------------------------------------- RMSNormalization

RMS_NAMES, RMS_CASES = _backend("test_rms_normalization")


@pytest.mark.parametrize("name", RMS_NAMES)
def test_rms_normalization_backend_case(name):
    _check_case(RMS_CASES[name])


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("scale", [["c"], ["b", "c"], ["a", "b", "c"], ["a", 1, "c"]])
def test_rms_normalization_scale_broadcasts_to_all_of_x(axis, scale):
    """onnxruntime broadcasts the scale to all of X one way, whatever the axis (the spec says X[axis:])."""
    m = _model([h.make_node("RMSNormalization", ["x", "s"], ["y"], axis=axis)],
               [("x", T.FLOAT, ["n", "t", "d"]), ("s", T.FLOAT, scale)], ["y"], 23)
    _agrees(m, _grid(n=(1, 2), t=(1, 3), d=(1, 4), a=(1, 2), b=(1, 3, 4), c=(1, 2, 4)))


# --------------------------------------------------------------------------- GroupNormalization

GN_NAMES, GN_CASES = _backend("test_group_normalization")


@pytest.mark.parametrize("name", GN_NAMES)
def test_group_normalization_backend_case(name):
    _check_case(GN_CASES[name], extra={"i0_1": (6, 8, 12), "i1_0": (6, 8, 12), "i2_0": (6, 8, 12)})


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("groups", [1, 2, 3])
@pytest.mark.parametrize("rank", [2, 4])
def test_group_normalization_groups_and_parameter_sizes(opset, groups, rank):
    """num_groups divides the channels; scale and bias have num_groups elements (18) or one per
    channel (21), in any shape, or 1 element (onnxruntime runs the function body, which reshapes
    and broadcasts them)."""
    x = ["n", "c"] + ["h"] * (rank - 2)
    m = _model([h.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups)],
               [("x", T.FLOAT, x), ("s", T.FLOAT, ["s"]), ("b", T.FLOAT, ["p", "q"])], ["y"], opset)
    _agrees(m, _grid(n=(1, 2), c=(1, 2, 3, 4, 6), h=(1, 3), s=(1, 2, 3, 4, 6), p=(1, 2), q=(1, 2, 3, 4)))


# --------------------------------------------------------------------------- RotaryEmbedding

ROT_NAMES, ROT_CASES = _backend("test_rotary_embedding")


@pytest.mark.parametrize("name", ROT_NAMES)
def test_rotary_embedding_backend_case(name):
    _check_case(ROT_CASES[name])


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("rotary_dim", [0, 2, 5])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("positions", [True, False])
def test_rotary_embedding_head_and_cache_dims(rank, rotary_dim, interleaved, positions):
    """The head size (X[3], or X[2] / num_heads: a multiple), rotary_embedding_dim <= it, and the
    caches' last dim half the rotary dim, rounded down; with position_ids the caches have a row
    per position, without them they are (batch, seq, half)."""
    x = ["b", 2, "s", "d"] if rank == 4 else ["b", "s", "d"]
    cache = ["r", "c"] if positions else ["cb", "s", "c"]
    inputs = [("x", T.FLOAT, x), ("cos", T.FLOAT, cache), ("sin", T.FLOAT, cache)]
    names = ["x", "cos", "sin"]
    if positions:
        inputs.append(("pos", T.INT64, ["b", "s"]))
        names.append("pos")
    attrs = dict(rotary_embedding_dim=rotary_dim, interleaved=interleaved)
    if rank == 3:
        attrs["num_heads"] = 2
    m = _model([h.make_node("RotaryEmbedding", names, ["y"], **attrs)], inputs, ["y"], 23)
    grid = _grid(b=(1, 2), s=(1, 3), d=(1, 2, 3, 4, 5, 6, 8, 10), c=(1, 2, 3, 4, 5), r=(2, 3), cb=(1, 2))
    _agrees(m, grid)
