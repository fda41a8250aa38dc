"""An attack on the domain of the newer ops: random chains of 1-4 of Attention (opset 23/24),
RMSNormalization, RotaryEmbedding, LayerNormalization, GroupNormalization, Einsum, the pools,
ConvTranspose with an output_shape, DFT, STFT, CastLike and the sequence ops, on graph inputs
whose dims are symbols. Each chain is first built at sizes where it runs (every dim has a
*role*: the batch, a head count, a sequence length); each graph-input dim is then named by its
role (shared with the other inputs of that role), by a fresh symbol of its own, or kept a
constant. onnxruntime runs the model (in a child: a native crash is no verdict) with one symbol
at a time moved to 0, 1, 2, 3, 4, 7 and 8, and the domain (with ``allow_zero=True``) is held to
its verdict: too wide (the domain allows a size onnxruntime refuses), too narrow (it refuses a
size onnxruntime runs), or wrong (a run inside the domain with shapes other than the inferred).

    python -m tests.domain_attack --count 200 --seed 0 [--show]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

GRID = (0, 1, 2, 3, 4, 7, 8)
F = T.FLOAT


class _Chain:
    """A chain under construction: ``cur`` is the current tensor, ``shape`` its dims as (role,
    size) pairs (role None: a dim no graph input names)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[tuple[str, int, list[tuple[str | None, int]]]] = []
        self.sizes: dict[str, int] = {}
        self.k = 0
        self.opset = 23
        rank = rng.choice([3, 3, 4])
        dims = [("B", rng.choice([1, 2])), ("S", rng.choice([2, 3, 4]))]
        dims += [("H", rng.choice([4, 8]))] if rank == 3 else [("N", rng.choice([2, 4])), ("D", rng.choice([4, 8]))]
        if rank == 4:
            dims = [dims[0], dims[2], dims[1], dims[3]]  # [B, N, S, D]
        self.cur = self.input(dims)
        self.shape = dims
        self.seq = False  # cur is a sequence

    def name(self, stem: str) -> str:
        self.k += 1
        return f"{stem}{self.k}"

    def role(self, size: int, stem: str = "r") -> tuple[str, int]:
        r = self.name(stem)
        self.sizes[r] = size
        return (r, size)

    def input(self, dims, dtype: int = F) -> str:
        n = self.name("in")
        for r, v in dims:
            if r is not None:
                self.sizes[r] = v
        self.inputs.append((n, dtype, list(dims)))
        return n

    def const(self, a) -> str:
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def node(self, op: str, inputs: list[str], n_out: int = 1, **attrs) -> list[str]:
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(h.make_node(op, inputs, outs, name=outs[0], **attrs))
        return outs

    def like(self, i: int) -> tuple[str | None, int]:
        """A dim equal to cur's dim ``i``: its role, or a new one of its size."""
        r, v = self.shape[i]
        return (r, v) if r is not None else self.role(v)

    # -- the steps: each returns False where it does not apply to cur
    def rms(self) -> bool:
        r = self.rng
        rank = len(self.shape)
        axis = r.choice([-1, -1, -2, 1, 0, -rank]) if rank > 1 else -1
        a = axis % rank
        scale = [self.like(i) if self.rng.random() < 0.8 else (None, 1) for i in range(a, rank)]
        if self.rng.random() < 0.3:
            scale = scale[self.rng.randint(0, len(scale) - 1):]  # (broadcast from the right)
        op = self.rng.choice(["RMSNormalization", "LayerNormalization"])
        ins = [self.cur, self.input(scale)]
        attrs = {"axis": axis}
        if r.random() < 0.3:
            attrs["stash_type"] = 1
        if r.random() < 0.2:
            attrs["epsilon"] = 1e-3
        if op == "LayerNormalization" and self.rng.random() < 0.5:
            ins.append(self.input([self.like(i) for i in range(a, rank)]))
        self.cur = self.node(op, ins, **attrs)[0]
        return True

    def group_norm(self) -> bool:
        if len(self.shape) < 3:
            return False
        c = self.shape[1][1]
        groups = self.rng.choice([g for g in (1, 2, 4) if c % g == 0])
        ch = self.like(1)
        self.cur = self.node("GroupNormalization", [self.cur, self.input([ch]), self.input([ch])], num_groups=groups)[0]
        return True

    def attention(self) -> bool:
        r = self.rng
        rank = len(self.shape)
        if rank == 3:  # [B, S, hidden] with q_num_heads
            hidden = self.shape[2][1]
            qh = r.choice([n for n in (1, 2, 4) if hidden % n == 0])
            kvh = r.choice([n for n in (1, 2, 4) if qh % n == 0])
            hs = hidden // qh
            kv_seq = self.role(r.choice([2, 3, 5]), "kv")
            vhs = r.choice([hs, 2])
            b = self.like(0)
            k = self.input([b, kv_seq, self.role(kvh * hs)])
            v = self.input([b, kv_seq, self.role(kvh * vhs)])
            vlast = self.role(vhs, "vhs")
            attrs = {"q_num_heads": qh, "kv_num_heads": kvh}
            q_seq = self.like(1)
            heads, kvheads = (None, qh), self.role(kvh, "kvh")
            hsd = self.role(hs, "hs")
        elif rank == 4:  # [B, N, S, D]
            qh = self.shape[1][1]
            kvh = r.choice([n for n in (1, 2, 4) if qh % n == 0])
            kvheads, hsd = self.role(kvh, "kvh"), self.like(3)
            kv_seq = self.role(r.choice([2, 3, 5]), "kv")
            b = self.like(0)
            k = self.input([b, kvheads, kv_seq, hsd])
            vlast = self.role(r.choice([hsd[1], 2]), "vhs")
            v = self.input([b, kvheads, kv_seq, vlast])
            attrs = {}
            q_seq, heads = self.like(2), self.like(1)
        else:
            return False
        ins = [self.cur, k, v]
        total = kv_seq[1]
        past = r.random() < 0.35
        if past:
            p = self.role(r.choice([1, 2, 3]), "past")
            total += p[1]
        if r.random() < 0.5:
            mshape = [(None, 1) if r.random() < 0.5 else b, (None, 1) if r.random() < 0.6 else heads, q_seq,
                      (None, total)]
            mshape = mshape[r.randint(0, 2):]
            ins.append(self.input(mshape, r.choice([T.BOOL, F])))
        else:
            ins.append("")
        if past:
            ins += [self.input([b, kvheads, p, hsd]), self.input([b, kvheads, p, vlast])]
        while ins and ins[-1] == "":
            ins.pop()
        if r.random() < 0.3:
            attrs["is_causal"] = 1
        if r.random() < 0.2:
            attrs["softcap"] = 2.0
        if r.random() < 0.25:
            self.opset = 24
            if not past and r.random() < 0.5:  # (nonpad_kv_seqlen: one per batch entry, values in range)
                while len(ins) < 6:
                    ins.append("")
                ins.append(self.input([b], T.INT64))
        n_out = 3 if past else r.choice([1, 1, 3])  # (onnxruntime needs the present outputs with a past)
        if r.random() < 0.2:
            n_out = 4
            attrs["qk_matmul_output_mode"] = r.choice([0, 1, 2, 3])
        outs = self.node("Attention", ins, n_out, **attrs)
        self.cur = outs[0]
        if rank == 3:
            self.shape = [b, q_seq, (None, qh * vhs)]
        else:
            self.shape = [b, heads, q_seq, vlast]
        return True

    def rotary(self) -> bool:
        r = self.rng
        rank = len(self.shape)
        if rank == 4:
            d = self.shape[3][1]
            attrs = {}
            seq = self.like(2)
        elif rank == 3:
            hidden = self.shape[2][1]
            nh = r.choice([n for n in (1, 2, 4) if hidden % n == 0 and (hidden // n) % 2 == 0] or [0])
            if not nh:
                return False
            d = hidden // nh
            attrs = {"num_heads": nh}
            seq = self.like(1)
        else:
            return False
        if d % 2:
            return False
        rot = d
        if r.random() < 0.3 and d >= 4:
            rot = r.choice([x for x in range(2, d, 2)])
            attrs["rotary_embedding_dim"] = rot
        if r.random() < 0.3:
            attrs["interleaved"] = 1
        half = self.role(rot // 2, "half")
        if r.random() < 0.6:
            maxpos = self.role(r.choice([8, 16]), "pos")
            ins = [self.cur, self.input([maxpos, half]), self.input([maxpos, half]),
                   self.input([self.like(0), seq], T.INT64)]
        else:
            b = self.like(0)
            ins = [self.cur, self.input([b, seq, half]), self.input([b, seq, half])]
        self.cur = self.node("RotaryEmbedding", ins, **attrs)[0]
        return True

    def einsum(self) -> bool:
        r = self.rng
        rank = len(self.shape)
        if not 2 <= rank <= 4:
            return False
        letters = "abcd"[:rank]
        eqs = [
            (f"{letters},{letters}->{letters}", 2),
            (f"...{letters[-1]},...{letters[-1]}->...", 2),
            (f"...{letters[-1]},{letters[-1]}z->...z", 2),
            (f"{letters}", 1),
            (f"...{letters[-2:]}->...{letters[-2:][::-1]}", 1),
            (f"{letters[:-1]}y,{letters[:-2]}yz->{letters[:-1]}z", 2),
        ]
        if self.shape[-1][1] == self.shape[-2][1]:
            eqs += [("...ii->...i", 1), (f"{letters[:-2]}ii", 1)]
        eqs += [(f"{letters[:-1]}y,yz", 2), ("...y,zy", 2)]  # (implicit outputs)
        eq, n_in = r.choice(eqs)
        lhs = eq.split("->")[0].split(",")
        if lhs[0].endswith("ii"):
            sizes0 = {c: self.shape[i] for i, c in enumerate(lhs[0][:-2])}
            sizes0["i"] = self.shape[-1]
        first = lhs[0].replace("...", "")
        sizes = {c: self.shape[rank - len(first) + i] for i, c in enumerate(first)}
        if lhs[0].endswith("ii"):
            sizes = sizes0
        ins = [self.cur]
        for term in lhs[1:]:
            dims = []
            ell = term.startswith("...")
            body = term[3:] if ell else term
            if ell:  # (onnxruntime needs every '...' of as many dims: each broadcast or cur's)
                lead = self.shape[:rank - len(first)]
                dims += [(None, 1) if r.random() < 0.3 else self.like(i) for i in range(len(lead))]
            for c in body:
                if c not in sizes:
                    sizes[c] = self.role(r.choice([2, 3]), "e")
                dims.append(sizes[c])
            ins.append(self.input(dims))
        self.cur = self.node("Einsum", ins, equation=eq)[0]
        self.shape = None  # (recomputed by the caller from onnxruntime)
        return True

    def pool(self) -> bool:
        if len(self.shape) < 3:
            return False
        r = self.rng
        op = r.choice(["MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool"])
        if op.startswith("Global"):
            self.cur = self.node(op, [self.cur])[0]
        else:
            sp = len(self.shape) - 2
            k = [r.randint(1, 2) for _ in range(sp)]
            attrs = {"kernel_shape": k, "strides": [r.randint(1, 2) for _ in range(sp)]}
            if op != "LpPool" and r.random() < 0.3:
                attrs["ceil_mode"] = 1
            self.cur = self.node(op, [self.cur], **attrs)[0]
        self.shape = None
        return True

    def conv_transpose(self) -> bool:
        if len(self.shape) != 3:
            return False
        r = self.rng
        c, length = self.shape[1][1], self.shape[2][1]
        k, s = r.randint(1, 3), r.randint(1, 2)
        m = self.role(r.choice([1, 2]), "m")
        w = self.input([self.like(1), m, (None, k)])
        attrs = {"kernel_shape": [k], "strides": [s]}
        lo = s * (length - 1) + k
        if r.random() < 0.7:
            attrs["output_shape"] = [r.choice([lo, lo + s - 1, lo - 1, lo + 1, max(1, lo - 2)])]
        if r.random() < 0.3:
            attrs["output_padding"] = [r.randint(0, s - 1)]
        del c
        self.cur = self.node("ConvTranspose", [self.cur, w], **attrs)[0]
        self.shape = None
        return True

    def dft(self) -> bool:
        r = self.rng
        comp = r.choice([1, 2])
        b, n = self.role(r.choice([1, 2]), "b"), self.role(r.choice([3, 4, 8]), "n")
        x = self.input([b, n, (None, comp)])
        if r.random() < 0.5:
            frame = r.choice([f for f in (2, 4) if f <= n[1]])
            ins = [x, self.const(np.array(r.choice([1, 2]), np.int64))]
            if r.random() < 0.5:
                ins.append(self.input([self.role(frame, "win")]))
            else:
                ins.append("")
            if ins[-1] == "" or r.random() < 0.5:  # (a window or a frame_length says the frame)
                ins.append(self.const(np.array(frame, np.int64)))
            if comp == 2:
                attrs = {}
            else:
                attrs = {"onesided": r.choice([0, 1])}
            if ins[-1] == "":
                ins.pop()
            self.cur = self.node("STFT", ins, **attrs)[0]
        else:
            inverse = r.choice([0, 1])  # (an inverse one-sided DFT takes a complex input, gives a real one)
            attrs = {"onesided": r.choice([0, 1]) if (comp == 2) == bool(inverse) else 0, "inverse": inverse}
            ins = [x, self.const(np.array(r.choice([2, 4, 8]), np.int64)) if r.random() < 0.5 else ""]
            ins.append(self.const(np.array(r.choice([1, -2]), np.int64)))
            self.opset = max(self.opset, 20)
            self.cur = self.node("DFT", ins, **attrs)[0]
        return True

    def cast_like(self) -> bool:
        dims = [self.like(i) if self.rng.random() < 0.5 else self.role(self.rng.choice([1, 2]))
                for i in range(self.rng.randint(0, 2))]
        dtype = self.rng.choice([T.FLOAT16, T.DOUBLE, F, F])
        t = self.input(dims, dtype)
        self.cur = self.node("CastLike", [self.cur, t])[0]
        self.ended = dtype != F  # (the ops after it take floats)
        return True

    def sequence(self) -> bool:
        r = self.rng
        rank = len(self.shape)
        axis = r.randint(0, rank - 1)
        how = r.choice(["split_concat", "construct_at", "construct_concat", "insert_erase"])
        if how == "split_concat":
            size = self.shape[axis][1]
            attrs = {"axis": axis}
            ins = [self.cur]
            pick = r.random()
            if pick < 0.3 and size >= 2:
                parts = [1, size - 1]
                ins.append(self.const(np.array(parts, np.int64)))
            elif pick < 0.6:
                ins.append(self.const(np.array(r.choice([1, 2]), np.int64)))
            else:
                attrs["keepdims"] = r.choice([0, 1])
            q = self.node("SplitToSequence", ins, **attrs)[0]
            self.cur = self.node("ConcatFromSequence", [q], axis=r.randint(0, rank - 1),
                                 new_axis=r.choice([0, 0, 1]))[0]
        else:
            other = [self.like(i) if r.random() < 0.7 else self.role(self.shape[i][1]) for i in range(rank)]
            q = self.node("SequenceConstruct", [self.cur, self.input(other)])[0]
            if how == "insert_erase":
                q = self.node("SequenceInsert", [q, self.input([self.like(i) for i in range(rank)])])[0]
                q = self.node("SequenceErase", [q, self.const(np.array(r.choice([0, -1, 1]), np.int64))])[0]
                how = r.choice(["construct_at", "construct_concat"])
            if how == "construct_at":
                self.cur = self.node("SequenceAt", [q, self.const(np.array(r.choice([0, 1, -1, -2]), np.int64))])[0]
            else:
                self.cur = self.node("ConcatFromSequence", [q], axis=axis, new_axis=r.choice([0, 0, 1]))[0]
        self.shape = None
        return True

    def scan(self) -> bool:
        """Scan summing slices of cur (and of a second scan input) into a state: the scan inputs'
        lengths agree, the state is a slice's shape."""
        r = self.rng
        rank = len(self.shape)
        if rank < 2:
            return False
        ax = r.randint(0, rank - 1)
        slice_dims = [self.like(i) for i in range(rank) if i != ax]
        state = self.input([self.like(i) if r.random() < 0.8 else (None, self.shape[i][1])
                            for i in range(rank) if i != ax])
        second = r.random() < 0.5
        ins = [state, self.cur]
        axes = [ax]
        if second:
            ax2 = r.randint(0, rank - 1)
            dims = list(slice_dims)
            dims.insert(ax2, self.like(ax))
            ins.append(self.input(dims))
            axes.append(ax2)
        body_in = [h.make_tensor_value_info("st", F, None), h.make_tensor_value_info("a", F, None)]
        nodes = [h.make_node("Add", ["st", "a"], ["t"])]
        if second:
            body_in.append(h.make_tensor_value_info("b2", F, None))
            nodes.append(h.make_node("Add", ["t", "b2"], ["t2"]))
        last = nodes[-1].output[0]
        nodes += [h.make_node("Identity", [last], ["st_out"]), h.make_node("Identity", [last], ["sc_out"])]
        body = h.make_graph(nodes, "body", body_in, [h.make_tensor_value_info("st_out", F, None),
                                                     h.make_tensor_value_info("sc_out", F, None)])
        outs = self.node("Scan", ins, 2, body=body, num_scan_inputs=len(axes), scan_input_axes=axes,
                         scan_output_axes=[r.choice([0, -1])])
        self.cur = outs[1]
        self.shape = None
        return True

    def loop(self) -> bool:
        """A Loop of a constant trip count inserting cur into a sequence it carries (and giving cur
        as a scan output), then ConcatFromSequence of the sequence."""
        r = self.rng
        trip = r.choice([1, 2, 3])
        seq0 = self.node("SequenceConstruct", [self.cur])[0]
        outer = self.cur
        body = h.make_graph(
            [h.make_node("SequenceInsert", ["q_in", outer], ["q_out"]), h.make_node("Identity", ["c_in"], ["c_out"]),
             h.make_node("Identity", [outer], ["scan_out"])], "body",
            [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c_in", T.BOOL, []),
             h.make_value_info("q_in", h.make_sequence_type_proto(h.make_tensor_type_proto(F, None)))],
            [h.make_tensor_value_info("c_out", T.BOOL, []),
             h.make_value_info("q_out", h.make_sequence_type_proto(h.make_tensor_type_proto(F, None))),
             h.make_tensor_value_info("scan_out", F, None)])
        q, _ = self.node("Loop", [self.const(np.array(trip, np.int64)), self.const(np.array(True)), seq0], 2,
                         body=body)
        self.cur = self.node("ConcatFromSequence", [q], axis=r.randint(0, len(self.shape) - 1),
                             new_axis=r.choice([0, 1]))[0]
        self.shape = None
        return True

    def model(self, rng: random.Random) -> tuple[onnx.ModelProto, dict[str, int]]:
        """The model with its inputs' dims named (a role's name, a fresh one or a constant), and the
        sizes it was built at."""
        binding: dict[str, int] = {}
        ins = []
        for n, dtype, dims in self.inputs:
            shape = []
            for a, (role, v) in enumerate(dims):
                p = rng.random()
                if role is None or p < 0.12:
                    shape.append(v)
                    continue
                s = role if p < 0.8 else f"{n}_{a}"
                shape.append(s)
                binding[s] = v
            ins.append(h.make_tensor_value_info(n, dtype, shape))
        # every value is an output, so that each written dim is held to onnxruntime's
        outs = [self.cur] + [o for n in self.nodes for o in n.output if o != self.cur]
        g = h.make_graph(self.nodes, "g", ins, [h.make_tensor_value_info(o, F, None) for o in outs], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", self.opset)])
        m.ir_version = 10
        _output_types(m)
        return m, binding


def _output_types(m: onnx.ModelProto) -> None:
    """The outputs' element types (a CastLike's, a sequence's), as onnx infers them; no shapes."""
    bare = onnx.ModelProto()
    bare.CopyFrom(m)
    for o in bare.graph.output:
        o.ClearField("type")
    try:
        g = onnx.shape_inference.infer_shapes(bare).graph
        typed = {v.name: v.type for v in list(g.value_info) + list(g.output)}
    except Exception:
        return
    for o in m.graph.output:
        if o.name in typed:
            o.type.CopyFrom(typed[o.name])
            if o.type.HasField("tensor_type"):
                o.type.tensor_type.ClearField("shape")
            elif o.type.HasField("sequence_type"):
                o.type.sequence_type.elem_type.tensor_type.ClearField("shape")


STEPS = ["rms", "group_norm", "attention", "rotary", "einsum", "pool", "conv_transpose", "dft", "cast_like",
         "sequence", "scan", "loop"]
# the steps after which cur's shape is taken from onnxruntime (a chain continues on it)
ENDS = {"dft"}


def random_model(rng: random.Random) -> tuple[onnx.ModelProto, dict[str, int]]:
    c = _Chain(rng)
    for _ in range(rng.randint(1, 4)):
        if not c.shape:
            break
        for _ in range(10):
            step = rng.choice(STEPS)
            if getattr(c, step)():
                break
        if step in ENDS or getattr(c, "ended", False):
            break
        if c.shape is None:
            shape = _base_shape(c)
            if shape is None:
                break
            c.shape = [(None, v) for v in shape]
    return c.model(rng)


def _base_shape(c: _Chain):
    """cur's shape at the sizes the chain is built at (onnxruntime's), or None where it refuses."""
    m, binding = c.model(random.Random(0))
    from tests.op_verdicts import feeds

    try:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return list(sess.run([c.cur], feeds(m, binding))[0].shape)
    except Exception:
        return None


def judge(m: onnx.ModelProto, binding: dict[str, int], grid=GRID) -> dict:
    """onnxruntime's verdict and onnxsym's domain at each move of one symbol to a size of ``grid``."""
    import onnxsym
    from onnxsym.errors import ShapeContradiction
    from onnxsym.model.isolated import Child, Crashed, Refused
    from tests.op_verdicts import _matches, _outside, feeds
    from tests.pin_attack import covered_nodes, refused_at

    names = [o.name for o in m.graph.output]
    out: dict = {"tries": 0, "too_wide": [], "too_narrow": [], "wrong": [], "other_shapes_outside": [],
                 "crashes": 0}
    with Child() as child:
        try:
            child.load(m.SerializeToString(), {"optimization": "all"})
        except (Refused, Crashed) as exc:
            return {"verdict": "refused at load", "error": str(exc)[:200]}
        try:
            child.run(feeds(m, binding), names)
        except (Refused, Crashed) as exc:
            base = str(exc)[:300]
        else:
            base = None
        if base is not None and ("must have the shape set" in base or "expected shape and shape from first" in base):
            # onnxruntime runs a Scan's body only where its own inference gave the body's outputs a
            # shape (not through a sequence's ConcatFromSequence), and one it got right (not an
            # Attention's output): the written model gives it one, and is judged instead
            try:
                m = onnxsym.annotate(m, allow_zero=True)
                child.load(m.SerializeToString(), {"optimization": "all"})
                child.run(feeds(m, binding), names)
                base, out["judged"] = None, "the written model"
            except Exception as exc:
                base = f"{base} (the written model: {str(exc)[:200]})"
        try:
            res = onnxsym.infer(m, allow_zero=True)
            domain = res.domain()
        except ShapeContradiction as exc:  # (a model that runs at no size: right where the base refused)
            if base is not None:
                return {"verdict": "base refused", "error": base}
            return {"verdict": "disagrees", "too_narrow": [f"a contradiction: {exc}"[:300]]}
        except Exception as exc:
            return {"verdict": "onnxsym error", "error": f"{type(exc).__name__}: {exc}"[:300]}
        out["unstated"] = len(domain.unstated)
        covered = covered_nodes(m, res, domain) if domain.unstated else set()
        if base is not None:  # (sizes a chain step chose that onnxruntime refuses: the domain refuses them too)
            if _outside(domain, binding) is None:
                uncovered = [] if refused_at(base) in covered else [f"base: {base}"]
                return dict(out, verdict="disagrees", tries=1, too_wide=[f"base: {base}"], uncovered=uncovered)
            return {"verdict": "base refused", "error": base}
        tries = [dict(binding, **{s: v}) for s in binding for v in grid if v != binding[s]]
        tries.insert(0, dict(binding))
        for sizes in tries:
            out["tries"] += 1
            try:
                got, err = child.run(feeds(m, sizes), names), ""
            except Crashed as exc:  # (no verdict; listed with whether the domain allows the size)
                out["crashes"] += 1
                allowed = _outside(domain, sizes) is None
                out.setdefault("crashed", []).append(f"{ {k: v for k, v in sizes.items() if v != binding[k]} }: "
                                                     f"{exc.signal}{', inside the domain' if allowed else ''}")
                continue
            except Refused as exc:
                got, err = None, str(exc).splitlines()[0][:200]
            try:
                broken = _outside(domain, sizes)  # (a range, then a condition)
            except Exception as exc:
                out.setdefault("judge_errors", []).append(f"{sizes}: {exc}")
                continue
            moved = {k: v for k, v in sizes.items() if v != binding[k]} or "base"
            wrong = [] if got is None else [f"{moved}: {n} is {g}, inferred {res.shape(n)}" for n, g in zip(names, got)
                                            if g is not None and not _matches(res.shape(n), g, sizes, res.fresh)]
            if got is None and broken is None:
                out["too_wide"].append(f"{moved}: {err}")
                if refused_at(err) not in covered:  # (a not-stated line excuses a refusal only at a node it covers)
                    out.setdefault("uncovered", []).append(f"{moved}: {err}")
            elif got is not None and broken is not None:
                # (the domain is where the model runs with the inferred shapes: a run with others is outside)
                out["other_shapes_outside" if wrong else "too_narrow"].append(f"{moved}: {broken}")
            elif got is not None:
                out["wrong"] += wrong
    out["verdict"] = "disagrees" if out["too_wide"] or out["too_narrow"] or out["wrong"] else "agrees"
    return out


def describe(m: onnx.ModelProto) -> str:
    ins = ", ".join(f"{i.name}[{','.join(d.dim_param or str(d.dim_value) for d in i.type.tensor_type.shape.dim)}]"
                    for i in m.graph.input)
    ops = " -> ".join(f"{n.op_type}({', '.join(f'{a.name}={h.get_attribute_value(a)}' for a in n.attribute if not a.g.node)})"
                      for n in m.graph.node)
    return f"{ins}: {ops}"


def run(count: int, seed: int, show: bool = False, save: str | None = None, make=None) -> Counter:
    """The tally of ``count`` models of ``make`` (by default :func:`random_model`: tests/corner_attack.py
    gives its own) at seed ``seed``."""
    tally: Counter = Counter()
    for i in range(count):
        rng = random.Random(f"{seed}:{i}")
        m, binding = (make or random_model)(rng)
        r = judge(m, binding)
        if r["verdict"] == "disagrees" and r.get("unstated") and not (r.get("wrong") or r.get("too_narrow")
                                                                       or r.get("uncovered")):
            # (honest: the domain says so, of the node onnxruntime refuses at; a size it refuses
            # that onnxruntime runs no not-stated line excuses)
            r["verdict"] = "disagrees where a condition is said not stated"
        tally[r["verdict"]] += 1
        tally["tries"] += r.get("tries", 0)
        tally["crashes"] += r.get("crashes", 0)
        tally["crashes inside the domain"] += sum(t.endswith("inside the domain") for t in r.get("crashed", []))
        for kind in ("too_wide", "too_narrow", "wrong"):
            if r["verdict"] == "disagrees" or kind == "wrong":
                tally[kind] += len(r.get(kind, []))
                tally[kind + " models"] += bool(r.get(kind))
        if show == "all" and r["verdict"] in ("base refused", "refused at load"):
            print(f"[{seed}:{i}] base refused: {describe(m)}\n    {r['error']}")
        if show and (r["verdict"] in ("disagrees", "onnxsym error", "disagrees where a condition is said not stated")
                     or r.get("crashed")):
            print(f"[{seed}:{i}] {r['verdict']}: {describe(m)}")
            for kind in ("too_wide", "too_narrow", "wrong", "crashed"):
                for t in r.get(kind, [])[:3]:
                    print(f"    {kind}: {t}")
            if "error" in r:
                print(f"    {r['error']}")
            if save:
                onnx.save(m, f"{save}/{seed}_{i}.onnx")
    return tally


def main(argv=None, make=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", nargs="?", const=True, help="print each model that disagrees (all: and each "
                    "the chain's own sizes are refused at)")
    ap.add_argument("--save", help="a folder to save each disagreeing model in")
    args = ap.parse_args(argv)
    tally = run(args.count, args.seed, args.show, args.save, make)
    for k, v in sorted(tally.items()):
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
