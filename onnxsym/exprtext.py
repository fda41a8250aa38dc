"""Text form of dims: the grammar of ``dim_param`` expressions.

Grammar (a subset of Python expressions)::

    expr   := term (('+' | '-') term)*
    term   := factor (('*' | '//' | '%') factor)*
    factor := ('-' | '+') factor | power
    power  := atom ('**' INT)?
    atom   := INT | NAME | STRING | '(' expr ')'
            | ('max' | 'min') '(' expr (',' expr)+ ')' | 'ceil_div' '(' expr ',' expr ')'

``NAME`` is a Python identifier; a symbol whose name is not an identifier is
written as a quoted string (``'sequence length' + 1``). ``//`` and ``%`` are
floor division and modulo with Python's semantics. Printing is deterministic and
``parse_dim(format_dim(d)) == d`` for every dim the engine makes.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from . import dims
from .dims import Dim, Expr, Sym
from .dims.expr import _OpAtom


class ExprSyntaxError(ValueError):
    """A dim_param string is not an expression of the documented grammar."""


# --------------------------------------------------------------------------- printing


def format_dim(d: Dim) -> str:
    return str(d)


def _name(s: Sym) -> str:
    return s.name if s.name.isidentifier() and s.name not in _FUNCS else repr(s.name)


def _is_sum(d: Dim) -> bool:
    if isinstance(d, int):
        return d < 0
    return len(d.terms) > 1 or d.terms[0][1] < 0


def _atom_text(atom) -> str:
    if isinstance(atom, Sym):
        return _name(atom)
    if atom.kind in ("max", "min"):
        return f"{atom.kind}({', '.join(str(a) for a in atom.args)})"
    n, d = atom.args
    op = "//" if atom.kind == "floordiv" else " % "
    return f"{_operand(n, False)}{op}{_operand(d, True)}"


def _operand(d: Dim, right: bool) -> str:
    """``d`` as an operand of ``//`` or ``%``; parenthesized unless it is a single factor."""
    text = format_expr(d) if isinstance(d, Expr) else str(d)
    if _is_sum(d):
        return f"({text})"
    if isinstance(d, Expr):
        (m, c), = d.terms
        single = c == 1 and len(m) == 1 and m[0][1] == 1
        if not single or (isinstance(m[0][0], _OpAtom) and m[0][0].kind in ("floordiv", "mod")):
            return f"({text})"
    return text


def _mono_text(m, c: int, negated: bool) -> str:
    """A monomial with a non-negative coefficient ``c``, to be printed after a sign."""
    factors = []
    for atom, e in m:
        t = _atom_text(atom)
        # "-s % 4" would read as "(-s) % 4": a leading minus needs the parentheses too.
        if isinstance(atom, _OpAtom) and atom.kind in ("floordiv", "mod") and (
                len(m) > 1 or c != 1 or e != 1 or negated):
            t = f"({t})"
        factors.append(t if e == 1 else f"{t}**{e}")
    if c != 1:
        factors.insert(0, str(c))
    return "*".join(factors)


def format_expr(e: Expr) -> str:
    # Symbolic terms in canonical order, the constant last: "2*s + t - 1".
    terms = [t for t in e.terms if t[0] != ()] + [t for t in e.terms if t[0] == ()]
    out = []
    for i, (m, c) in enumerate(terms):
        body = str(abs(c)) if m == () else _mono_text(m, abs(c), i == 0 and c < 0)
        if i == 0:
            out.append(("-" + body) if c < 0 else body)
        else:
            out.append((" - " if c < 0 else " + ") + body)
    return "".join(out)


# --------------------------------------------------------------------------- parsing

_FUNCS = {"max": dims.dmax, "min": dims.dmin, "ceil_div": dims.ceil_div}


def parse_dim(text: str, symbol: Optional[Callable[[str], Dim]] = None) -> Dim:
    """Parse ``text`` into a dim. ``symbol(name)`` gives the dim of each name
    (default: a symbol with the default range)."""
    if symbol is None:
        symbol = dims.sym
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprSyntaxError(f"not a dim expression: {text!r}") from exc
    return _eval(tree.body, symbol, text)


def _eval(node, symbol, text) -> Dim:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, str)):
            raise ExprSyntaxError(f"{text!r}: only integers and names may appear, not {node.value!r}")
        return symbol(node.value) if isinstance(node.value, str) else node.value
    if isinstance(node, ast.Name):
        return symbol(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, symbol, text)
        return dims.neg(v) if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a = _eval(node.left, symbol, text)
        b = _eval(node.right, symbol, text)
        op = type(node.op)
        if op is ast.Add:
            return dims.add(a, b)
        if op is ast.Sub:
            return dims.sub(a, b)
        if op is ast.Mult:
            return dims.mul(a, b)
        if op is ast.FloorDiv:
            return dims.floordiv(a, b)
        if op is ast.Mod:
            return dims.mod(a, b)
        if op is ast.Pow and isinstance(b, int) and b >= 0:
            return a**b if isinstance(a, int) else a.__pow__(b)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS \
            and not node.keywords and len(node.args) >= (2 if node.func.id != "ceil_div" else 2):
        args = [_eval(a, symbol, text) for a in node.args]
        if node.func.id == "ceil_div" and len(args) != 2:
            raise ExprSyntaxError(f"{text!r}: ceil_div takes two arguments")
        return _FUNCS[node.func.id](*args)
    raise ExprSyntaxError(f"{text!r}: unsupported syntax {ast.unparse(node)!r}")


dims.later.format = format_expr  # str() of an Expr is its text in this grammar
