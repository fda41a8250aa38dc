"""Printing a program in one of the symbol dialect's forms, pretty or generic.

Each style is what one of ``bishengir-opt``'s passes makes (the tool defines them; the
tests compare after both texts go through it once):

- ``propagate`` (propagate-symbol's layout): each ``symbol.symbolic_int`` just before its
  first use: a function argument's symbols, then its ``symbol.bind_symbolic_shape``; a node's
  new symbols (a derived one after its operands) before the node, its bindings after it
  (for a value inside a region, the symbols go before the top-level op that holds it);
- ``erased`` (erase-symbol): no symbol ops;
- ``encoding`` (symbol-to-encoding): every binding moved into its value's type, all dims
  named, ``tensor<?x3x?xf32, [@S0, 3, @S1]>``; the symbolic_ints, left without a use, are
  gone (and with them the ranges and maps);
- ``unfolded`` (unfold-symbolic-int): each symbolic_int defined by a map becomes an
  ``affine.apply`` of it where it stood; each other one becomes ``tensor.dim`` of the first
  value bound to it (inserted after that value's definition, or at the start of its block);
  every binding is gone. A symbolic_int no binding names directly stays. Where that
  ``tensor.dim`` comes after an ``affine.apply`` that reads it (a value bound to ``16*S17``
  before any bound to ``S17``: the tool's pass then makes invalid IR), the ``affine.apply``
  moves down to just after its operands; if none of its places sees them all (they are
  defined in sibling regions), the symbolic_ints it needs stay.

Every printer checks its text as it writes it (:mod:`.dominance`): a use its definition does
not dominate is an internal error, never a written file.

The ``symbol`` ops are not registered in upstream MLIR, so only the generic form
(``--generic``) parses there (with ``--allow-unregistered-dialect``). The generic form
is bishengir-opt's: a symbolic_int's properties are ``int_expressions`` (its map over its
operands, empty for a root), ``max_val``, ``min_val`` and ``symbol_name``; a bind's
``shape_expressions``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from .attrs import string_attr
from .build import Block, Op, Program, Val, type_of
from .dominance import Dominance, InvalidIR
from .symbols import Entry, Symbol, bind_map

STYLES = ("propagate", "erased", "encoding", "unfolded")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$.]*$")


def symbol_ref(name: str) -> str:
    return "@" + name if _IDENT.match(name) else '@"' + name.replace("\\", "\\5C").replace('"', '\\22') + '"'


def _fn_type(ins: list[str], outs: list[str]) -> str:
    res = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    return f"({', '.join(ins)}) -> {res}"


def bind_line(ref: str, type_text: str, symbols: list[str], amap: str, generic: bool, ind: str) -> str:
    """One ``symbol.bind_symbolic_shape`` of ``ref`` to ``symbols`` through ``amap``."""
    if generic:
        types = ", ".join([type_text] + ["index"] * len(symbols))
        ops = "".join(", " + s for s in symbols)
        return f'{ind}"symbol.bind_symbolic_shape"({ref}{ops}) <{{shape_expressions = {amap}}}> : ({types}) -> ()'
    return f"{ind}symbol.bind_symbolic_shape {ref}, [{', '.join(symbols)}], {amap} : {type_text}"


class Printer:
    def __init__(self, prog: Program, style: str = "propagate", generic: bool = False):
        if style not in STYLES:
            raise ValueError(f"unknown style {style!r}; one of {', '.join(STYLES)}")
        self.prog = prog
        self.style = style
        self.generic = generic
        self.lines: list[str] = []
        self.before: dict[int, list[Symbol]] = defaultdict(list)  # id(top-level op or argument) -> symbols
        # id(op or block) -> [(value, symbol, axis, constant)], in order
        self.dims: dict[int, list[tuple[Val, Symbol, int, str]]] = defaultdict(list)
        self.unfolded: set[Symbol] = set()
        self.dom = Dominance()
        self.pending: list[Symbol] = []  # unfolded: affine.applys waiting for their operands
        if style in ("propagate", "unfolded"):
            self._place()
        if style == "unfolded":
            self._plan_unfold()

    # -- types ------------------------------------------------------------------
    def ty(self, v: Val) -> str:
        if self.style == "encoding" and v.binding:
            refs = [symbol_ref(e.name) if isinstance(e, Symbol) else str(e) for e in v.binding]
            return type_of(v, "[" + ", ".join(refs) + "]")
        return type_of(v)

    # -- where symbols are defined and unfolded ---------------------------------------
    def _sites(self, block: Block, depth: int,
               anchor: Op | None) -> Iterator[tuple[Val, int, Op | Val | None, Block | Op]]:
        """Every value in text order: (value, depth, the top-level op or argument it hangs on, its owner)."""
        for a in block.args:
            yield a, depth, anchor if depth else a, block
        for op in block.ops:
            here = op if depth == 0 else anchor
            for r in op.regions:
                yield from self._sites(r, depth + 1, here)
            for v in op.results:
                yield v, depth, here, op

    def _place(self) -> None:
        """Each symbol before its first use, operands first (propagate-symbol's layout)."""
        defined: set[Symbol] = set()

        def need(s: Symbol, at: Op | Val | None) -> None:
            if s in defined:
                return
            for o in s.operands + s.names:
                need(o, at)
            self.before[id(at)].append(s)
            defined.add(s)

        for val, _, anchor, _ in self._sites(self.prog.func.body, 0, None):
            for e in val.binding or ():
                if isinstance(e, Symbol):
                    need(e, anchor)

    def _plan_unfold(self) -> None:
        """As unfold-symbolic-int walks the bindings: a symbol without a map becomes
        tensor.dim of the first value whose binding names it directly."""
        for val, _, _, owner in self._sites(self.prog.func.body, 0, None):
            for axis, e in enumerate(val.binding or ()):
                if isinstance(e, Symbol) and e.map is None and e not in self.unfolded:
                    self.unfolded.add(e)
                    self.dims[id(owner)].append((val, e, axis, self.prog.namer.fresh(f"c{axis}")))

    def _keep(self, stuck: list[Symbol]) -> None:
        """The symbols the stuck affine.applys need, unfolded into tensor.dims where no place
        sees them all: kept as symbolic_ints instead, where propagate-symbol has them."""
        keep: set[Symbol] = set()

        def walk(s: Symbol) -> None:
            for o in s.operands:
                if o in self.unfolded:
                    keep.add(o)
                walk(o)

        for s in stuck:
            walk(s)
        if not keep:
            raise InvalidIR(f"MLIR export: no place for the definition of {stuck[0].ssa}")
        self.unfolded -= keep
        for k, planned in self.dims.items():
            self.dims[k] = [d for d in planned if d[1] not in keep]

    # -- symbol ops ---------------------------------------------------------------
    def symbolic_int(self, s: Symbol, ind: str) -> None:
        if self.style == "unfolded":
            if s.map:
                if all(self.dom.visible(o.ssa) for o in s.operands):
                    self.affine_apply(s, ind)
                    self._ready(ind)
                else:
                    self.pending.append(s)  # an operand is a tensor.dim still to come
                return
            if s in self.unfolded:
                return  # a tensor.dim defines it
        self.dom.use([o.ssa for o in s.operands], f"the symbolic_int {s.ssa}")
        self.dom.define(s.ssa)
        expression = f"expression = {string_attr(s.expression)}" if s.expression is not None else None
        ops = ", ".join(o.ssa for o in s.operands)
        if self.generic:  # as bishengir-opt prints it: the definition in properties, a root's map empty
            props = (f"int_expressions = {s.map or 'affine_map<() -> ()>'}, max_val = {s.hi} : i64, "
                     f"min_val = {s.lo} : i64, symbol_name = {symbol_ref(s.name)}")
            extra = f" {{{expression}}}" if expression else ""
            self.lines.append(f'{ind}{s.ssa} = "symbol.symbolic_int"({ops}) <{{{props}}}>{extra} : '
                              f'{_fn_type(["index"] * len(s.operands), ["index"])}')
        else:
            attrs = ([expression] if expression else []) + [f"max_val = {s.hi} : i64", f"min_val = {s.lo} : i64"]
            definition = f" [{ops}], {s.map}" if s.map else ""
            self.lines.append(f"{ind}{s.ssa} = symbol.symbolic_int {symbol_ref(s.name)}{definition} "
                              f"{{{', '.join(attrs)}}} : index")
        if self.pending:
            self._ready(ind)

    def _ready(self, ind: str) -> None:
        """Write the waiting affine.applys whose operands are all defined now, in their order."""
        while True:
            ready = next((s for s in self.pending if all(self.dom.visible(o.ssa) for o in s.operands)), None)
            if ready is None:
                return
            self.pending.remove(ready)
            self.affine_apply(ready, ind)

    def affine_apply(self, s: Symbol, ind: str) -> None:
        self.dom.use([o.ssa for o in s.operands], f"the affine.apply {s.ssa}")
        self.dom.define(s.ssa)
        ops = ", ".join(o.ssa for o in s.operands)
        if self.generic:
            self.lines.append(f'{ind}{s.ssa} = "affine.apply"({ops}) <{{map = {s.map}}}> : '
                              f'{_fn_type(["index"] * len(s.operands), ["index"])}')
        else:
            self.lines.append(f"{ind}{s.ssa} = affine.apply {s.map}()[{ops}]")

    def bind(self, v: Val, binding: list[Entry], ind: str) -> None:
        syms, amap = bind_map(binding)
        self.dom.use([v.ref] + [s.ssa for s in syms], f"the binding of {v.ref}")
        self.lines.append(bind_line(v.ref, self.ty(v), [s.ssa for s in syms], amap, self.generic, ind))

    def tensor_dim(self, v: Val, s: Symbol, axis: int, c: str, ind: str) -> None:
        self.dom.use([v.ref], f"the tensor.dim {s.ssa}")
        self.dom.define(c, s.ssa)
        if self.generic:
            self.lines.append(f'{ind}{c} = "arith.constant"() <{{value = {axis} : index}}> : () -> index')
            self.lines.append(f'{ind}{s.ssa} = "tensor.dim"({v.ref}, {c}) : ({self.ty(v)}, index) -> index')
        else:
            self.lines.append(f"{ind}{c} = arith.constant {axis} : index")
            self.lines.append(f"{ind}{s.ssa} = tensor.dim {v.ref}, {c} : {self.ty(v)}")

    def unfolded_dims(self, owner: Block | Op, ind: str) -> None:
        # each is inserted right after the definition (or at the block's start): the last first
        for v, s, axis, c in reversed(self.dims.get(id(owner), ())):
            self.tensor_dim(v, s, axis, c, ind)
        if self.pending:
            self._ready(ind)

    def symbols_before(self, at: object, ind: str) -> None:
        for s in self.before.get(id(at), ()):
            self.symbolic_int(s, ind)

    def site(self, v: Val, ind: str) -> None:
        if self.style == "propagate" and v.binding:
            self.bind(v, v.binding, ind)

    # -- ops and blocks -------------------------------------------------------------
    def op(self, op: Op, ind: str) -> None:
        self.symbols_before(op, ind)
        self.dom.use([v.ref for v in op.operands], f"{op.name} {op.result_name or ''}".strip())
        if op.name == "func.return" and not self.generic:
            outs = ", ".join(v.ref for v in op.operands)
            types = ", ".join(self.ty(v) for v in op.operands)
            self.lines.append(f"{ind}return {outs} : {types}" if op.operands else f"{ind}return")
            return
        head = ""
        if op.results:
            head = (op.results[0].ref if len(op.results) == 1 else f"{op.result_name}:{len(op.results)}") + " = "
        head += f'"{op.name}"({", ".join(v.ref for v in op.operands)})'
        attrs = ""
        if op.attrs:
            attrs = " {" + ", ".join(f"{k} = {t}" for k, t in sorted(op.attrs)) + "}"
        sig = _fn_type([self.ty(v) for v in op.operands], [self.ty(v) for v in op.results])
        if not op.regions:
            self.lines.append(f"{ind}{head}{attrs} : {sig}")
        else:
            self.lines.append(f"{ind}{head} ({{")
            for k, r in enumerate(op.regions):
                if k:
                    self.lines.append(f"{ind}}}, {{")
                with self.dom.block():
                    self.block(r, ind, ind + "  ")
            self.lines.append(f"{ind}}}){attrs} : {sig}")
        self.dom.define(*[v.ref for v in op.results])
        self.unfolded_dims(op, ind)
        for v in op.results:
            self.site(v, ind)

    def block(self, b: Block, label_ind: str, ind: str, header: bool = True) -> None:
        if b.args and header:
            args = ", ".join(f"{a.ref}: {self.ty(a)}" for a in b.args)
            self.lines.append(f"{label_ind}^bb0({args}):")
        self.dom.define(*[a.ref for a in b.args])
        self.unfolded_dims(b, ind)
        for a in b.args:
            self.symbols_before(a, ind)
            self.site(a, ind)
        for op in b.ops:
            self.op(op, ind)

    def run(self) -> str:
        while True:
            text = self._print()
            if not self.pending:
                return text
            self._keep(self.pending)  # then again: each time fewer tensor.dims, so this ends
            self.lines, self.dom, self.pending = [], Dominance(), []

    def _print(self) -> str:
        f = self.prog.func
        ins = [self.ty(a) for a in f.body.args]
        outs = [self.ty(v) for v in f.outputs]
        name = symbol_ref(f.name)
        if self.generic:
            self.lines.append('"builtin.module"() ({')
            self.lines.append(f'  "func.func"() <{{function_type = {_fn_type(ins, outs)}, '
                              f"sym_name = {string_attr(f.name)}}}> ({{")
            self.block(f.body, "  ", "    ")
            self.lines.append("  }) : () -> ()")
            self.lines.append("}) : () -> ()")
        else:
            args = ", ".join(f"{a.ref}: {t}" for a, t in zip(f.body.args, ins))
            res = "" if not outs else " -> " + (outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")")
            self.lines.append("module {")
            self.lines.append(f"  func.func {name}({args}){res} {{")
            self.block(f.body, "    ", "    ", header=False)
            self.lines.append("  }")
            self.lines.append("}")
        self.lines += self.prog.resources.section()
        return "\n".join(self.lines) + "\n"
