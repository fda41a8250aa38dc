"""Where onnxruntime departs from the operator spec's text. onnxruntime is the truth onnxsym
holds to (its rules and conditions follow it); docs/conditions.md lists each departure, one row
per op, from here."""

DEPARTURES: tuple[tuple[str, str], ...] = (
    ("RMSNormalization",
     "The spec broadcasts scale to `X[axis:]`; onnxruntime broadcasts it one way to all of X whatever the "
     "axis: scale (2, 1, 5) runs on X (2, 3, 5) at axis 2, and (3, 1) on X (2, 3, 5) at axis 1."),
    ("LayerNormalization",
     "The spec broadcasts Scale and B to `X[axis:]`; onnxruntime broadcasts them one way to all of X "
     "whatever the axis, as RMSNormalization's scale: Scale (3, 1) runs on X (2, 3, 4) at axis 2."),
    ("LayerNormalization",
     "onnxruntime refuses a normalized part `X[axis:]` with no elements (X (0, 3, 4) at axis 0), which "
     "the spec does not rule out; so does RMSNormalization. X (0, 3, 4) at axis 1 runs."),
    ("GroupNormalization",
     "The spec's scale and bias are `(num_groups)` (opset 18) or `(C)` (opset 21); onnxruntime runs the "
     "function body, which reshapes them to one axis and broadcasts it, so any shape of that many elements "
     "runs, and so does one of 1 element."),
    ("Attention",
     "At opsets 23 and 24 onnxruntime's kernel needs attn_mask's last two dims to be exactly "
     "(q_sequence_length, total_sequence_length): a dim of 1 there does not broadcast, though the spec "
     "calls the mask broadcastable. Its dim -3 is 1 or q_num_heads, dim -4 1 or the batch."),
    ("Attention",
     "Opset 25 (the window attributes): onnxruntime 1.32 has no kernel and runs the function body, which "
     "pads or crops attn_mask's last dim to the total sequence length (any size runs) and adds it "
     "broadcasting: its dims -2, -3, -4 against L, q_num_heads and the batch, so a mask dim grows a 1 of Q's "
     "and Y's shape with it (Q (2, 4, 1, 8) and a mask (4, 6) give Y (2, 4, 4, 6)), and without past and "
     "present outputs expands K and V (their batch, V's heads and "
     "sequence length, K's head size may be 1; 3-D K and V are reshaped with Q's batch and K's length, so "
     "only their element counts must fit, and Y's last dim is q_num_heads times V's count / (B*S*kv_num_heads)) "
     "and broadcasts nonpad_kv_seqlen over the batch, which the domain and dims follow. Its Expand and "
     "Reshape run other sizes the spec rules out (a K or V dim of 1 with past or present outputs) with "
     "other output shapes: those are outside the domain, which "
     "states opset 23-24's conditions for them."),
    ("LinearAttention",
     "onnxruntime 1.32 has no kernel and runs the function body, which reshapes key, value and decay "
     "to (B, T, kv_num_heads, -1) and beta to (B, T, -1, 1) with query's B and T, so only their element "
     "counts must fit; the state is (B, kv_num_heads, query's width / q_num_heads, value's width / "
     "kv_num_heads) (its key dim from query, not key's width / kv_num_heads), and a per-step head size "
     "of 1 (key's but for the delta rules, value's, decay's) broadcasts against it. The domain and dims "
     "follow that. A past_state that broadcasts against the state runs too, with other output shapes: "
     "outside the domain."),
    ("RotaryEmbedding",
     "The caches' last dim is `rotary_embedding_dim // 2` rounded down (a rotary dim of 5 takes caches of "
     "2), and a 4-D X ignores num_heads."),
    ("GatherND",
     "With `batch_dims` b the spec's data and indices have the same first b dims; onnxruntime counts the "
     "batches of each (the product of those dims) and needs only the data's count to divide the indices' "
     "(data (2, 3) runs with indices (4, 1) at b = 1, and (2, 3, 4) with (3, 2, 1) at b = 2), the output "
     "`indices.shape[:-1] + data.shape[b + k:]`."),
    ("Scan",
     "The spec's loop runs no iteration at a sequence length of 0 (the initial states, empty scan outputs); "
     "onnxruntime 1.32 refuses it (it slices each scan input at step 0 first), and at opset 8 refuses a "
     "batch of 0 rows (a row of no step runs). The spec asks the body's outputs to keep one shape in every "
     "iteration; onnxruntime also holds the state outputs to the initial states' shapes (it feeds them back "
     "in buffers of those shapes). Both: tests/test_scatter_scan_ort.py. At a length of 1 nothing is fed back: "
     "the one state output goes to a final buffer shaped as onnx's inference gave the body's output where that "
     "is all static (a [4, 1] state that Add broadcasts against slices [S, 4] runs at one step, giving [4, 4]), "
     "else as the initial state; and every body output is held to the static dims onnx's inference gives it "
     "(onnx 1.23 gives a 3-D Attention's output a last dim of 0 where V's last dim is not static: a Scan over "
     "it is refused at every size): tests/test_domain_corners.py. A Scan nested in a Scan's or a Loop's body "
     "is held the same way (onnxruntime infers the subgraphs at load too); where the body holds an op onnx's "
     "inference does not know (a contrib op) or a shape onnx folds only with its data propagation, onnxruntime's "
     "own inference decides and the domain says that need not stated: tests/test_scan_view_ort.py. At opset 8 "
     "a sequence_lens entry outside [1, the scan length] is refused (so is a length of 0 with sequence_lens); "
     "without it a length of 0 runs no step: the initial state comes out zero-filled, held to the static dims "
     "onnx's inference gives the Scan's output (where it gives the body's output all static, that shape "
     "instead), and a scan output is no tensor at all where onnx's inference leaves the body's output not all "
     "static (else [B, 0, ...]): a node reading it is refused there (\"Missing Input\"), so the domain needs a "
     "length of 1 then; a graph output is absent, where onnxsym writes the [B, 0, ...] the spec stacks (the "
     "written model runs as the original does). A row of one step goes to the final buffer as at a length of 1, "
     "so with sequence_lens whether a state the body changes is fed back the entries decide: "
     "tests/test_scan8_ort.py. A scan input on an axis other "
     "than 0 is moved to the front by onnxruntime's transpose kernel, which dies (SIGFPE) on a 0 after that "
     "axis unless the move is a copy (that axis, or all before it, 1); a scan output on an axis other than 0 is "
     "stacked on axis 0 and moved there by the same kernel, which dies on a 0 in the moved axis or a dim it "
     "does not move past unless the move is a copy (a [0] slice over 2 steps on output axis 1): "
     "tests/test_domain_attack.py."),
    ("Einsum",
     "The spec's Einsum runs at every size; onnxruntime's kernel first transposes each operand to one order of "
     "the labels (the ellipsis' dims, then the letters as first met), and where that transpose moves one axis "
     "and is not a copy it dies (SIGFPE) on a 0 in the moved axis or in a dim it does not move past "
     "(`ay,zy->az` at y 0 and z not 1). A repeated letter's diagonal is taken by transposing the pair innermost "
     "and back with the same kernel, which dies the same way (`bib->bi` at b 0 and i not 1). It also dies on "
     "some 0s where a transpose moves two blocks of axes (`aabb->ab` at a 0, `ca...->...` at an ellipsis dim 0), "
     "by no rule found: the domain says such a node's needs not stated where a dim may be 0 (allow_zero): "
     "tests/test_domain_attack.py, tests/test_domain_corners.py."),
    ("NegativeLogLikelihoodLoss",
     "The spec's target is the input's shape without axis 1; onnxruntime runs the function body, whose "
     "GatherElements takes the target's block of the input: in a model with symbolic dims an input larger "
     "on N or d1..dk runs too (the loss has the target's shape), a smaller one is refused. A class may be "
     "negative (-C <= class < C, counted from the end, and so into the weight), and each ignore_index "
     "element is read as class 0. Where both dims are static, onnxruntime's load check wants them equal (from opset "
     "22 also a static weight length and a static C)."),
    ("SoftmaxCrossEntropyLoss",
     "As NegativeLogLikelihoodLoss, whose body onnxruntime runs after a LogSoftmax over axis 1: labels "
     "at most the scores' dims (not equal), negative classes counted from the end, ignored ones read as 0."),
    # (these two: tests/test_resample_ort.py)
    ("GridSample",
     "Before opset 20 the spec takes a 4-D X only; onnxruntime's kernel takes 4-D and 5-D X at every opset "
     "(the grid's last dim 2 or 3; cubic mode 4-D only)."),
    ("MaxUnpool",
     "An explicit output_shape needs X's batch and channels and at least as many elements as the shape "
     "the attributes compute, not each dim at least as large: (1, 1, 2, 8) runs where (1, 1, 4, 4) is "
     "computed."),
    # (these three: tests/test_ort_departures.py)
    ("SplitToSequence",
     "With a scalar `split` and `keepdims=0`: the spec reads `keepdims` only without `split`; onnxruntime "
     "applies it: `split` 1 gives pieces with the axis dropped (rank one less); another `split` reshapes each "
     "piece without the axis, which fails for a piece longer than 1 with elements, so it runs only where "
     "X[axis] <= 1 or X has no elements."),
    ("Concat",
     "onnxruntime skips an input without elements (also ConcatFromSequence an item): the others agree with "
     "the first one off the axis, or have no elements, and the output's dims are the first non-empty "
     "input's (the first one's where every input is empty). The spec asks every input to agree."),
    ("DFT",
     "With `inverse=1` and `onesided=1`: the spec's output is complex, `[..., n//2 + 1, 2]`; onnxruntime "
     "returns the real signal `[..., dft_length, 1]` of a complex one-sided input, `dft_length` 2*(n - 1) "
     "when not given."),
    ("STFT",
     "The spec's signal is `[batch, length, 1 or 2]`; onnxruntime's kernel also takes `[batch, length]`, a "
     "real signal."),
    ("Add, Sub, Mul, Div, Floor, Ceil (float16)",
     "The spec computes in float16; onnxruntime's CPU provider has no float16 kernel for these (Round has "
     "one) and computes the chain in float32, its inserted Casts replacing a Cast of an integer to float16: "
     "`floor(Cast(2049, float16) / 3)` gives 683, not float16's 682 (2049 is 2048.0 there), and "
     "`Cast(2049, float16) + 1` 2050, not 2048. onnxsym "
     "follows a float16 size only where its range is proven within 2**11, where both agree "
     "(tests/test_float_exact_chains.py)."),
)


def section() -> list[str]:
    """The markdown section of docs/conditions.md."""
    lines = ["## Where onnxruntime departs from the spec", "",
             "onnxruntime's behaviour is what onnxsym's rules and conditions follow; where it differs from the",
             "operator spec's text:", "", "| op | what onnxruntime does |", "|---|---|"]
    lines += [f"| {op} | {text.replace('|', chr(92) + '|')} |" for op, text in DEPARTURES]
    return lines + [""]
