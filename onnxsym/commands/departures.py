"""Where onnxruntime departs from the operator spec's text. onnxruntime is the truth onnxsym
holds to (its rules and conditions follow it); docs/conditions.md lists each departure, one row
per op, from here."""

DEPARTURES: tuple[tuple[str, str], ...] = (
    ("RMSNormalization",
     "The spec broadcasts scale to `X[axis:]`; onnxruntime broadcasts it one way to all of X whatever the "
     "axis: scale (2, 1, 5) runs on X (2, 3, 5) at axis 2, and (3, 1) on X (2, 3, 5) at axis 1."),
    ("GroupNormalization",
     "The spec's scale and bias are `(num_groups)` (opset 18) or `(C)` (opset 21); onnxruntime runs the "
     "function body, which reshapes them to one axis and broadcasts it, so any shape of that many elements "
     "runs, and so does one of 1 element."),
    ("Attention",
     "At opsets 23 and 24 onnxruntime's kernel needs attn_mask's last two dims to be exactly "
     "(q_sequence_length, total_sequence_length): a dim of 1 there does not broadcast, though the spec "
     "calls the mask broadcastable. Its dim -3 is 1 or q_num_heads, dim -4 1 or the batch."),
    ("Attention",
     "Opset 25 (the window attributes): onnxruntime 1.32 has no kernel and runs the function body, whose "
     "MatMul and Expand broadcasts run sizes the spec rules out (a K sequence of 1 against a V sequence "
     "of 6) with other output shapes; the domain does not state opset 25's conditions yet."),
    ("LinearAttention",
     "onnxruntime 1.32 has no kernel and runs the function body, which reshapes key and value to "
     "(B, T, kv_num_heads, -1) with query's B and T (only element counts must divide) and broadcasts "
     "the state update, so it runs sizes the spec rules out, with other output shapes (present_state's "
     "key dim is query's width / q_num_heads, not key's / kv_num_heads); the domain and dims follow the "
     "spec there, not onnxruntime, yet."),
    ("RotaryEmbedding",
     "The caches' last dim is `rotary_embedding_dim // 2` rounded down (a rotary dim of 5 takes caches of "
     "2), and a 4-D X ignores num_heads."),
    # (these three: tests/test_ort_departures.py)
    ("SplitToSequence",
     "With a scalar `split` and `keepdims=0`: the spec reads `keepdims` only without `split`; onnxruntime "
     "applies it: `split` 1 gives pieces with the axis dropped (rank one less), any other `split` fails."),
    ("DFT",
     "With `inverse=1` and `onesided=1`: the spec's output is complex, `[..., n//2 + 1, 2]`; onnxruntime "
     "returns the real signal `[..., dft_length, 1]` of a complex one-sided input, `dft_length` 2*(n - 1) "
     "when not given."),
    ("STFT",
     "The spec's signal is `[batch, length, 1 or 2]`; onnxruntime's kernel also takes `[batch, length]`, a "
     "real signal."),
)


def section() -> list[str]:
    """The markdown section of docs/conditions.md."""
    lines = ["## Where onnxruntime departs from the spec", "",
             "onnxruntime's behaviour is what onnxsym's rules and conditions follow; where it differs from the",
             "operator spec's text:", "", "| op | what onnxruntime does |", "|---|---|"]
    lines += [f"| {op} | {text.replace('|', chr(92) + '|')} |" for op, text in DEPARTURES]
    return lines + [""]
