"""Checks on an exported module parsed by upstream MLIR (the iree-base-compiler wheel's bindings).

Nothing here trusts onnxsym's text: the module is parsed and walked by MLIR, the
maps are evaluated from MLIR's own affine expressions, and the dims they must
give come from onnxruntime running the model.
"""

import re

from iree.compiler import ir

import onnxsym
from onnxsym.commands.verify import runtime_values
from onnxsym.inference.engine import node_label


def parse(text):
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    module = ir.Module.parse(text, ctx)
    assert module.operation.verify()
    return module


def walk(block):
    """Every op of a block and its regions, in text order."""
    for op in block.operations:
        op = op.operation
        yield op
        for region in op.regions:
            for b in region.blocks:
                yield from walk(b)


def evaluate(e, syms):
    if isinstance(e, ir.AffineConstantExpr):
        return e.value
    if isinstance(e, ir.AffineSymbolExpr):
        return syms[e.position]
    a, b = evaluate(e.lhs, syms), evaluate(e.rhs, syms)
    if isinstance(e, ir.AffineAddExpr):
        return a + b
    if isinstance(e, ir.AffineMulExpr):
        return a * b
    if isinstance(e, ir.AffineFloorDivExpr):
        return a // b
    if isinstance(e, ir.AffineCeilDivExpr):
        return -(-a // b)
    if isinstance(e, ir.AffineModExpr):
        return a % b
    raise AssertionError(f"unexpected affine expression {e}")


def runtime_shapes(result, bindings):
    """Every value's shape as onnxruntime computes it at ``bindings``."""
    return runtime_shapes_at(result, [bindings])[0]


def runtime_shapes_at(result, assignments):
    """For each assignment of the input symbols, every value's shape as onnxruntime computes it."""
    model = result.model
    out = []
    for _, feeds, values in runtime_values(result, assignments):
        shapes = {n: tuple(v.shape()) for n, v in values.items()}
        shapes.update({k: tuple(v.shape) for k, v in feeds.items()})
        shapes.update({t.name: tuple(t.dims) for t in model.graph.initializer})
        out.append(shapes)
    return out


def derived(op) -> bool:
    """A symbolic_int defined by a map (a root's int_expressions is the empty map)."""
    return "int_expressions" in op.attributes and len(op.attributes["int_expressions"].value.results) > 0


class Checker:
    """Binds every symbolic_int to a number at one runtime assignment and checks every binding."""

    def __init__(self, module, model):
        self.module = module  # the ops below are views into it: it must outlive them
        self.func = module.body.operations[0].operation
        self.entry = self.func.regions[0].blocks[0]
        self.model = model
        self.outputs = {node_label(n, i): list(n.output) for i, n in enumerate(model.graph.node)}

    def onnx_name(self, v):
        """The main graph's name of ``v``; None inside a subgraph (onnxruntime cannot expose those)."""
        if isinstance(v, ir.BlockArgument):
            return self.model.graph.input[v.arg_number].name if v.owner == self.entry else None
        op = v.owner
        if op.parent.name != "func.func":
            return None
        label = op.attributes["onnx.name"].value
        if op.name == "onnx.Initializer":
            return label
        return self.outputs[label][v.result_number]

    def dynamic_dims_are_bound(self):
        """Every dynamic dim of every tensor value is bound (or is a tensor.dim's source)."""
        covered = set()
        values = list(self.entry.arguments)
        for op in walk(self.entry):
            if op.name == "symbol.bind_symbolic_shape":
                covered.update((op.operands[0], k) for k in range(op.operands[0].type.rank))
            elif op.name == "tensor.dim":
                covered.add((op.operands[0], op.operands[1].owner.attributes["value"].value))
            elif op.name.startswith("onnx."):
                values.extend(op.results)
        checked = 0
        for v in values:
            t = v.type
            if not isinstance(t, ir.RankedTensorType):
                continue
            for k in range(t.rank):
                if t.is_dynamic_dim(k):
                    assert (v, k) in covered, f"dim {k} of {self.onnx_name(v)} ({t}) is not bound"
                    checked += 1
        return checked

    def maps_match_runtime(self, shapes):
        """Evaluate every symbol and every binding at the runtime ``shapes``; returns dims compared."""
        ops = list(walk(self.entry))
        value = {}
        # Symbols without a map take their value from the first binding that names them directly.
        for op in ops:
            if op.name == "tensor.dim":
                axis = op.operands[1].owner.attributes["value"].value
                value[op.results[0]] = shapes[self.onnx_name(op.operands[0])][axis]
            elif op.name == "symbol.bind_symbolic_shape" and self.onnx_name(op.operands[0]) is not None:
                amap = op.attributes["shape_expressions"].value
                real = shapes[self.onnx_name(op.operands[0])]
                for k, e in enumerate(amap.results):
                    if isinstance(e, ir.AffineSymbolExpr):
                        s = op.operands[1 + e.position]
                        if not derived(s.owner):
                            value.setdefault(s, real[k])
        roots = {}
        for op in ops:
            if op.name == "symbol.symbolic_int" and not derived(op) \
                    and "expression" not in op.attributes and op.results[0] in value:
                roots[op.attributes["symbol_name"].value] = value[op.results[0]]
        compared = 0
        for op in ops:
            if op.name == "symbol.symbolic_int":
                s = op.results[0]
                if derived(op):
                    amap = op.attributes["int_expressions"].value
                    value[s] = evaluate(amap.results[0], [value[o] for o in op.operands])
                if "expression" in op.attributes:  # checked where bound directly, else computed
                    expected = onnxsym.evaluate(onnxsym.parse_dim(op.attributes["expression"].value), roots)
                    assert value.setdefault(s, expected) == expected, f"{op}: expression gives {expected}, runtime {value[s]}"
                if s in value:
                    assert op.attributes["min_val"].value <= value[s] <= op.attributes["max_val"].value, str(op)
            elif op.name == "symbol.bind_symbolic_shape" and self.onnx_name(op.operands[0]) is not None:
                v = op.operands[0]
                amap = op.attributes["shape_expressions"].value
                got = tuple(evaluate(e, [value[s] for s in op.operands[1:]]) for e in amap.results)
                real = shapes[self.onnx_name(v)]
                assert got == real, f"binding of {self.onnx_name(v)}: {amap} gives {got}, runtime {real}"
                static = tuple(v.type.shape)
                assert all(d == g for d, g in zip(static, got) if d != ir.ShapedType.get_dynamic_size())
                compared += len(got)
        return compared


def with_definitions(default_text, encoded_text):
    """The encoding form with the default form's symbolic_ints put back at the top of the function
    (symbol-to-encoding drops them; encoding-to-symbol needs them)."""
    defs = [line for line in default_text.splitlines() if "symbol.symbolic_int" in line]
    lines = encoded_text.splitlines()
    k = next(i for i, line in enumerate(lines) if line.strip().startswith(("func.func", "^bb0")))
    return "\n".join(lines[:k + 1] + defs + lines[k + 1:]) + "\n"


def bound_symbols(module, model):
    """For each main-graph value with a binding, per dim the number or the bound symbol's name."""
    check = Checker(module, model)
    out = {}
    for op in walk(check.entry):
        if op.name != "symbol.bind_symbolic_shape" or check.onnx_name(op.operands[0]) is None:
            continue
        dims = []
        for e in op.attributes["shape_expressions"].value.results:
            if isinstance(e, ir.AffineConstantExpr):
                dims.append(e.value)
            else:
                dims.append(op.operands[1 + e.position].owner.attributes["symbol_name"].value)
        out[check.onnx_name(op.operands[0])] = tuple(dims)
    return out


# A torch-mlir value tensor type: its dims and its element type.
VTENSOR = re.compile(r"^!torch\.vtensor<\[([^\]]*)\],(.+)>$")


def refines(ours: str, theirs: str) -> int:
    """Our type is theirs with some ``?`` made static; returns how many."""
    if ours == theirs:
        return 0
    a, b = VTENSOR.match(ours), VTENSOR.match(theirs)
    assert a and b and a.group(2) == b.group(2), (ours, theirs)
    da, db = a.group(1).split(","), b.group(1).split(",")
    assert len(da) == len(db), (ours, theirs)
    assert all(y == "?" or x == y for x, y in zip(da, db)), (ours, theirs)
    return sum(x != y for x, y in zip(da, db))
