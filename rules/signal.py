"""Rules for signal ops: DFT, STFT, the window generators and MelWeightMatrix."""

from __future__ import annotations

from onnxsym import dims
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Condition, Outputs, register
from onnxsym.semantics import intops
from onnxsym.semantics.shapes import normalize_axis

from .common import F32, arg, present, scalar


def _onesided(length):
    return dims.floordiv(length, 2) + 1


def _dft_signal(site):
    """onnxruntime: "input signal dimension must be greater than zero when the output is
    non-empty": the transformed axis is >= 1, or the output has no elements (with dft_length or
    one-sided, the output's axis is not the input's)."""
    x = site.shape(0)
    if x is None or len(x) < 2:
        return
    if site.opset >= 20:
        v = site.value(2) if len(site.node.input) > 2 and site.node.input[2] else (-2,)
        axis = v[0] if v is not None and len(v) == 1 and isinstance(v[0], int) else None
    else:
        axis = site.attr_int("axis", 1)
    if axis is None or not -len(x) <= axis < len(x) - 1:
        return
    axis %= len(x)
    t = x[axis]
    onesided, inverse = site.attr_int("onesided", 0), site.attr_int("inverse", 0)
    given = len(site.node.input) > 1 and bool(site.node.input[1])
    if dims.try_le(1, t) is True or (onesided and inverse and not given):  # (the rule needs t >= 1 there)
        return
    if given:
        v = site.value(1)
        if v is None or len(v) != 1 or isinstance(v[0], bool) or not isinstance(v[0], (int, dims.Expr)):
            return
        length = v[0]
    elif onesided:
        length = dims.add(dims.floordiv(t, 2), 1)
    else:
        return  # the output's axis is t: empty with the input's
    numel = length
    for i, d in enumerate(x[:-1]):
        if i != axis:
            numel = dims.mul(numel, d)
    yield site.raw("or", dims.dmin(t, 1), 1, f"DFT: the signal axis {t} >= 1, or the output has no elements "
                   f"({numel} == 0)", alts=((dims.dmin(t, 1), 1), (numel, 0)))


DFT_SIGNAL = Condition("the signal axis is >= 1, or the output has no elements", _dft_signal, replayable=True)


@register("DFT", since=17, conditions=["the last axis is 1 or 2", "an inverse one-sided DFT takes a complex input",
                                       DFT_SIGNAL])
def dft(node: Node) -> Outputs:
    """The transformed axis becomes ``dft_length`` (``floor(n/2) + 1`` when onesided);
    the last axis (real, or real and imaginary) becomes 2."""
    x = arg(node, 0)
    in_shape = shape_of(x, x.dtype)
    rank = len(in_shape)
    if node.opset >= 20:
        axis = scalar(node, 2) if present(node, 2) else -2
        if axis is None:
            return [Tensor(x.dtype, node.fresh_shape(rank, "DFT axis input is not known"))]
    else:
        axis = node.attr_int("axis", 1)
    axis = normalize_axis(axis, rank)
    if axis == rank - 1:
        raise ShapeContradiction("DFT axis cannot be the last (complex) axis")
    length = in_shape[axis]
    given = present(node, 1)
    if given:
        length = scalar(node, 1)
        if length is None:
            length = node.fresh("DFT dft_length is not known", 0, axis, lo=1)
    last = in_shape[-1]
    # onnxruntime takes a last axis of 1 (real) or 2 (complex) only
    node.require_at_least(last, 1, "DFT: the last axis is 1 (real) or 2 (complex)")
    node.require_at_least(dims.sub(2, last), 0, "DFT: the last axis is 1 (real) or 2 (complex)")
    if node.attr_int("onesided", 0) and node.attr_int("inverse", 0):
        # onnxruntime's inverse one-sided DFT (IRFFT) takes a complex half spectrum and
        # returns a real signal [..., dft_length or 2 * (n - 1), 1] (the spec text says 2)
        node.require_equal(last, 2, "DFT: an inverse one-sided DFT takes a complex input (last axis 2)")
        shape = list(in_shape)
        if not present(node, 1):
            node.require_at_least(in_shape[axis], 1, "DFT: an inverse one-sided DFT has at least one bin")
            length = 2 * (in_shape[axis] - 1)
        shape[axis], shape[-1] = length, 1
        return [Tensor(x.dtype, tuple(shape))]
    if node.attr_int("onesided", 0):
        length = _onesided(length)
    shape = list(in_shape)
    shape[axis], shape[-1] = length, 2
    return [Tensor(x.dtype, tuple(shape))]


@register("STFT", since=17, conditions=["frame_length <= the signal length", "a 3-D signal's last axis is 1 or 2",
                                        "frame_length, when given with a window, is the window's length",
                                        "frame_step >= 1", "the frame length is >= 1 (onnxruntime crashes on 0)"])
def stft(node: Node) -> Outputs:
    """(batch, frames, bins, 2) with ``frames = (signal_length - frame_length) // frame_step + 1``;
    frame_length is the input or the window's length, bins ``frame_length`` or
    ``floor(frame_length/2) + 1`` when onesided (the default). The spec's signal is
    (batch, length, 1 or 2); onnxruntime's kernel also takes (batch, length), a real signal,
    as onnxscript's STFT of a waveform gives it (onnx-asr's mel preprocessors)."""
    x = arg(node, 0)
    signal = shape_of(x, x.dtype)
    if len(signal) not in (2, 3):
        raise ShapeContradiction(f"STFT signal must have rank 2 or 3, not {len(signal)}")
    if len(signal) == 3:  # (onnxruntime: a real or a complex signal only)
        node.require_at_least(dims.sub(2, signal[2]), 0, "STFT: the signal's last axis is 1 (real) or 2 (complex)")
    step = scalar(node, 1)
    if isinstance(step, int) and step <= 0:
        raise ShapeContradiction(f"STFT frame_step is {step}; onnxruntime needs it > 0")
    if step is not None and intops.is_dim(step):
        node.require_at_least(step, 1, "STFT: frame_step is > 0")
    frame = scalar(node, 3) if present(node, 3) else None
    window = arg(node, 2)
    if frame is not None and window.shape:  # (onnxruntime: "the size of the window must be equal to the frame_length")
        node.require_equal(window.shape[0], frame, "STFT: the window's length is frame_length")
    if frame is None and window.shape is not None and len(window.shape) == 1:
        frame = window.shape[0]
    if isinstance(frame, int) and frame <= 0:
        raise ShapeContradiction(f"STFT frame length {frame}; onnxruntime's kernel needs one >= 1 (it crashes on 0)")
    if frame is not None and intops.is_dim(frame):  # (a window of 0: onnxruntime's kernel divides by it, SIGFPE)
        node.require_at_least(frame, 1, "STFT: the frame length (frame_length or the window's) is >= 1")
    if frame is None:
        frames = node.fresh("STFT frame length is not known", 0, 1)
        bins = node.fresh("STFT frame length is not known", 0, 2)
    else:
        if intops.is_dim(frame):
            node.require_at_least(dims.sub(signal[1], frame), 0, f"STFT: the frame length {frame} is at most the signal's")
        if step is None:
            frames = node.fresh("STFT frame_step is not known", 0, 1)
        else:
            frames = dims.floordiv(signal[1] - frame, step) + 1
        bins = _onesided(frame) if node.attr_int("onesided", 1) else frame
    return [Tensor(x.dtype, (signal[0], frames, bins, 2))]


@register("BlackmanWindow HammingWindow HannWindow", since=17, conditions=())
def window(node: Node) -> Outputs:
    size = scalar(node, 0)
    if size is None:
        size = node.fresh(f"{node.op_type} size is not known", 0, 0)
    return [Tensor(node.attr_int("output_datatype", F32), (size,))]


@register("MelWeightMatrix", since=17, conditions=())
def mel_weight_matrix(node: Node) -> Outputs:
    """(floor(dft_length/2) + 1, num_mel_bins)."""
    bins, length = scalar(node, 0), scalar(node, 1)
    rows = _onesided(length) if length is not None else node.fresh("MelWeightMatrix dft_length is not known", 0, 0)
    cols = bins if bins is not None else node.fresh("MelWeightMatrix num_mel_bins is not known", 0, 1)
    return [Tensor(node.attr_int("output_datatype", F32), (rows, cols))]
