"""The torch dialect form: the model as torch-mlir's ONNX importer (``iree-import-onnx``) writes it,
with onnxsym's shapes in the types and its symbols as torch-mlir's symbol ops.

Op for op as the importer: a ``func.func`` over ``!torch.vtensor<[?,3,?,?],f32>`` with the
model's ``torch.onnx_meta.*`` attributes; initializers first, as ``torch.operator "onnx.Constant"``;
every node a ``torch.operator "onnx.Conv"`` with its attributes as ``torch.onnx.*``
(ints ``si64``, floats ``f32``, lists as arrays); subgraphs as regions in the order of their
attribute names, ending in ``torch.operator_terminator``. Where the importer writes ``?``,
onnxsym writes the dims it proved static.

Symbols: a ``torch.symbolic_int`` per root symbol (and per dim no affine map expresses,
named by its expression, as torch.export names them) with its range, and a
``torch.bind_symbolic_shape`` after every value with a dynamic dim, a derived dim written
as its affine expression over the roots (``(s0, s1 * 2 + 1, 3)``). IREE's
``torch-iree-bind-symbolic-shapes`` turns these into ``util.assume.int`` facts.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx

from ..dims import Dim
from ..inference.values import Optional_, Tensor
from ..inference.values import Sequence as SeqValue
from .affine import affine_map, affine_text
from .attrs import Resources, attribute, float_literal, string_attr
from .build import NO_VALUE, Block, Op, Program, Val
from .dominance import Dominance
from .symbols import Entry, Symbol
from .types import element_type

# onnx.TensorProto element type -> the importer's element type (integers signed or unsigned).
TORCH_ELEMENTS = {
    1: "f32", 2: "ui8", 3: "si8", 4: "ui16", 5: "si16", 6: "si32", 7: "si64", 8: "!torch.str",
    9: "i1", 10: "f16", 11: "f64", 12: "ui32", 13: "ui64", 14: "complex<f32>", 15: "complex<f64>",
    16: "bf16", 17: "f8E4M3FN", 18: "f8E4M3FNUZ", 19: "f8E5M2", 20: "f8E5M2FNUZ", 21: "ui4", 22: "si4",
}


def torch_element(dtype: int) -> str:
    return TORCH_ELEMENTS.get(dtype) or element_type(dtype)


def attr_tensor_type(dtype: int, dims: Sequence[int]) -> str:
    """The builtin tensor type of a tensor attribute, ``tensor<2xsi64>``."""
    return "tensor<" + "".join(f"{d}x" for d in dims) + torch_element(dtype) + ">"


def torch_resources(weights: bool, base_dir: str | None) -> Resources:
    # the importer gives every blob the maximum numeric alignment, 8
    return Resources(weights, base_dir, type_text=attr_tensor_type, alignment=8)


def value_type(v: object) -> str:
    """``!torch.vtensor<[?,3],f32>``; ``*`` for an unknown rank; lists and optionals as the importer."""
    if v is NO_VALUE or v is None:
        return "!torch.none"
    if isinstance(v, Tensor):
        return "!torch." + _vtensor(v)
    if isinstance(v, SeqValue):
        return f"!torch.list<{_vtensor(v.elem) if isinstance(v.elem, Tensor) else 'none'}>"
    if isinstance(v, Optional_):
        return f"!torch.optional<{_vtensor(v.elem) if isinstance(v.elem, Tensor) else 'none'}>"
    return "!torch.none"


def _vtensor(t: Tensor) -> str:
    shape = "*" if t.shape is None else "[" + ",".join(str(d) if isinstance(d, int) else "?" for d in t.shape) + "]"
    return f"vtensor<{shape},{torch_element(t.dtype)}>"


def _attribute(a: onnx.AttributeProto, res: Resources, hint: str) -> str | None:
    T = onnx.AttributeProto
    if a.type == T.INT:
        return f"{a.i} : si64"
    if a.type == T.FLOAT:
        return f"{float_literal(a.f)} : f32"
    if a.type == T.INTS:
        return "[" + ", ".join(f"{i} : si64" for i in a.ints) + "]"
    if a.type == T.FLOATS:
        return "[" + ", ".join(f"{float_literal(f)} : f32" for f in a.floats) + "]"
    if a.type == T.GRAPHS:  # the importer refuses graph lists: kept as text
        return string_attr(str(onnx.helper.get_attribute_value(a)))
    # strings, tensors, a graph (a region) and the rest as the builtin dialect writes them
    return attribute(a, res, hint)


class TorchPrinter:
    def __init__(self, prog: Program, model: onnx.ModelProto, res: Resources):
        self.prog = prog
        self.model = model
        self.res = res
        self.lines: list[str] = []
        self.dom = Dominance()  # checks the text as it is written (see .dominance)
        syms = prog.symbols.order
        # torch's symbols: the roots and the opaque dims; a derived dim is an expression over them
        self.torch_syms = [s for s in syms if s.map is None]

    # -- symbols ------------------------------------------------------------------
    def symbol_name(self, s: Symbol) -> str:
        return s.expression if s.expression is not None else s.name

    def symbolic_int(self, s: Symbol, ind: str) -> None:
        self.dom.define(s.ssa)
        self.lines.append(f"{ind}{s.ssa} = torch.symbolic_int {string_attr(self.symbol_name(s))} "
                          f"{{min_val = {s.lo}, max_val = {s.hi}}} : !torch.int")

    def bind(self, v: Val, binding: list[Entry], ind: str) -> None:
        operands: list[Symbol] = []

        def operand(d: Dim) -> int:
            if isinstance(d, int):  # affine_text asks only of symbols and opaque units
                raise TypeError(f"the number {d} has no symbol")
            s = self.prog.symbols.of(d)
            if s not in operands:
                operands.append(s)
            return operands.index(s)

        results = []
        for e in binding:
            if isinstance(e, int):
                results.append(str(e))
            elif e.map is None:
                results.append(f"s{operand(e.dim)}")
            else:
                results.append(affine_text(e.dim, operand))
        amap = affine_map(len(operands), results)
        self.dom.use([v.ref] + [s.ssa for s in operands], f"the binding of {v.ref}")
        self.lines.append(f"{ind}torch.bind_symbolic_shape {v.ref}, [{', '.join(s.ssa for s in operands)}], "
                          f"{amap} : {value_type(v.value)}")

    def site(self, v: Val, ind: str) -> None:
        if v.binding:
            self.bind(v, v.binding, ind)

    # -- ops ------------------------------------------------------------------------
    def op(self, op: Op, ind: str) -> None:
        self.dom.use([v.ref for v in op.operands], f"{op.name} {op.result_name or ''}".strip())
        if op.name == "func.return":
            returned = ", ".join(v.ref for v in op.operands)
            self.lines.append(f"{ind}return {returned} : {', '.join(value_type(v.value) for v in op.operands)}")
            return
        if op.name == "onnx.Yield":
            types = ", ".join(value_type(v.value) for v in op.operands)
            self.lines.append(f"{ind}torch.operator_terminator {', '.join(v.ref for v in op.operands)}"
                              + (f" : {types}" if op.operands else ""))
            return
        if op.name == "onnx.NoValue":
            self.dom.define(op.results[0].ref)
            self.lines.append(f"{ind}{op.results[0].ref} = torch.constant.none")
            return
        if op.name == "onnx.Initializer":
            t = op.source
            if not isinstance(t, onnx.TensorProto):
                raise TypeError(f"{op.result_name}: an initializer op without its tensor")
            attrs = {"torch.onnx.value": self.res.tensor(t, t.name)}
            name = "onnx.Constant"
        else:
            n = op.source
            if not isinstance(n, onnx.NodeProto):
                raise TypeError(f"{op.result_name}: a {op.name} op without its node")
            name = f"onnx.{n.op_type}"
            attrs = {}
            for a in n.attribute:
                text = _attribute(a, self.res, f"{op.result_name[1:]}_{a.name}")
                if text is not None:
                    attrs[f"torch.onnx.{a.name}"] = text
        head = ""
        if op.results:
            head = (op.results[0].ref if len(op.results) == 1 else f"{op.result_name}:{len(op.results)}") + " = "
        attr_text = " {" + ", ".join(f"{k} = {attrs[k]}" for k in sorted(attrs)) + "}" if attrs else ""
        ins = ", ".join(value_type(v.value) for v in op.operands)
        outs = [value_type(v.value) for v in op.results]
        res = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
        line = f'{ind}{head}torch.operator "{name}"({", ".join(v.ref for v in op.operands)}){attr_text} : ({ins}) -> {res}'
        if not op.regions:
            self.lines.append(line)
        else:
            # the importer's regions are in the order of their attribute names (else before then)
            order = sorted(range(len(op.regions)), key=lambda k: op.region_names[k])
            self.lines.append(line + " {")
            for i, k in enumerate(order):
                if i:
                    self.lines.append(f"{ind}}}, {{")
                with self.dom.block():
                    self.block(op.regions[k], ind, ind + "  ")
            self.lines.append(f"{ind}}}")
        self.dom.define(*[v.ref for v in op.results])
        for v in op.results:
            self.site(v, ind)

    def block(self, b: Block, label_ind: str, ind: str) -> None:
        if b.args:
            self.lines.append(f"{label_ind}^bb0({', '.join(f'{a.ref}: {value_type(a.value)}' for a in b.args)}):")
        self.dom.define(*[a.ref for a in b.args])
        for a in b.args:
            self.site(a, ind)
        for op in b.ops:
            self.op(op, ind)

    # -- the function -----------------------------------------------------------------
    def meta(self) -> str:
        m = self.model
        attrs: dict[str, str] = {}
        others = {}
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                attrs["torch.onnx_meta.opset_version"] = f"{o.version} : si64"
            else:
                others[o.domain] = o.version
        if others:
            attrs["torch.onnx_meta.opset_versions"] = "{" + ", ".join(
                f"{_key(d)} = {v} : si64" for d, v in sorted(others.items())) + "}"
        attrs["torch.onnx_meta.ir_version"] = f"{m.ir_version} : si64"
        attrs["torch.onnx_meta.producer_name"] = string_attr(m.producer_name)
        attrs["torch.onnx_meta.producer_version"] = string_attr(m.producer_version)
        return ", ".join(f"{k} = {attrs[k]}" for k in sorted(attrs))

    def run(self) -> str:
        f = self.prog.func
        g = self.model.graph
        inits = {t.name for t in g.initializer}
        body = f.body
        # as the importer: a graph input with an initializer is no argument but that constant
        args = [a for a, i in zip(body.args, g.input) if i.name not in inits]
        defaults = {a.ref: t for a, i in zip(body.args, g.input) if i.name in inits
                    for t in g.initializer if t.name == i.name}
        sig = ", ".join(f"{a.ref}: {value_type(a.value)}" for a in args)
        outs = [value_type(v.value) for v in f.outputs]
        res = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
        self.lines.append("module {")
        self.lines.append(f"  func.func {_func_ref(f.name)}({sig}) -> {res} attributes {{{self.meta()}}} {{")
        ind = "    "
        self.dom.define(*[a.ref for a in args])
        for s in self.torch_syms:
            self.symbolic_int(s, ind)
        for a in args:
            self.site(a, ind)
        # the importer's order: every initializer first, as listed in the graph (an input's default too)
        constants = {op.source.name: op for op in body.ops
                     if op.name == "onnx.Initializer" and isinstance(op.source, onnx.TensorProto)}
        constants.update({t.name: Op("onnx.Initializer", [], [a], source=t) for a, t in
                          ((a, defaults[a.ref]) for a in body.args if a.ref in defaults)})
        for t in g.initializer:
            if t.name in constants:
                self.op(constants.pop(t.name), ind)
        for op in body.ops:
            if op.name != "onnx.Initializer":
                self.op(op, ind)
        self.lines.append("  }")
        self.lines.append("}")
        self.lines += self.res.section()
        return "\n".join(self.lines) + "\n"


def _key(name: str) -> str:
    return name if name.replace("_", "a").replace(".", "a").isalnum() and not name[0].isdigit() else string_attr(name)


def _func_ref(name: str) -> str:
    from .printer import symbol_ref
    return symbol_ref(name)
