"""The errors onnxsym reports. Each carries one line that names the place."""

from __future__ import annotations


class OnnxsymError(Exception):
    """Base of every error onnxsym raises on purpose."""


class ModelLoadError(OnnxsymError):
    """The file is missing, not ONNX, truncated, or its external data is missing."""


class GraphError(OnnxsymError):
    """The graph is malformed: a cycle, a value nobody produces, a name produced twice."""


class InvalidModel(GraphError):
    """A node breaks a rule of the ONNX spec: an operator its opset does not define (or
    removed), a required attribute missing, too few or too many inputs, inputs its
    definition rules out (Slice ``starts`` and ``ends`` of different lengths). The message
    names the node and the rule."""


class OutputError(OnnxsymError):
    """An output cannot be written: a missing folder, no permission, a full disk, a
    target that is no file to write into (a folder, a block device, a socket)."""


class ShapeContradiction(OnnxsymError):
    """The shapes in the model cannot all hold (``3 == 4``), named by the node(s).

    Its fields, as onnx-shape-inference's ``ShapeInferenceError``: ``message`` (what cannot
    hold), the ``node``, ``op_type`` and ``domain`` where it was met (empty where a rule
    raises it: the engine names the node, in a new error whose cause is the rule's) and
    ``context`` (where that node's inputs come from). ``str()`` is the one line the command
    line prints."""

    def __init__(self, message: str, *, node: str = "", op_type: str = "", domain: str = "", context: str = ""):
        self.message, self.node, self.op_type, self.domain, self.context = message, node, op_type, domain, context
        super().__init__(self.text())

    def text(self) -> str:
        head = f"{self.op_type} node '{self.node}': " if self.node else ""
        return head + self.message + (f"; {self.context}" if self.context else "")

    def at(self, node: str, op_type: str, domain: str, context: str) -> ShapeContradiction:
        """This contradiction met at a node (``context``: where its inputs come from); raise it
        ``from`` this one."""
        return ShapeContradiction(str(self), node=node, op_type=op_type, domain=domain, context=context)


class VerificationError(OnnxsymError):
    """``verify`` could not run the model in onnxruntime."""


class MissingDependency(OnnxsymError):
    """An optional package a feature needs is not installed (onnxruntime for ``verify``);
    the message says what to install."""


class UserInputError(OnnxsymError):
    """An argument (``bind``, ``ranges``, ``assume``, ...) that does not fit the model. The
    message names the library's argument; ``cli`` is the same message naming the
    command-line option, which the command line prints."""

    def __init__(self, message: str, cli: str = ""):
        super().__init__(message)
        self.cli = cli or message
        self.unknown_binds: list = []  # names bound that are no input symbol of the model


class NoShapeError(OnnxsymError, KeyError):
    """:meth:`onnxsym.Result.shape_of` has no shape to give: the model has no value of that name
    (``near``: the nearest names, for the message's "did you mean"), or the value's rank is
    unknown, or it is no tensor (a sequence, an optional). A ``KeyError`` too, as a dict's lookup."""

    def __init__(self, value: str, why: str, near: tuple[str, ...] = ()):
        hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        super().__init__(f"{value!r}: {why}{hint}")
        self.value, self.why, self.near = value, why, near

    def __str__(self) -> str:  # (KeyError's would quote the whole message)
        return str(self.args[0])


class RuleFailure(Exception):
    """A rule raised where it should have inferred: a bug in onnxsym, not in the model.
    Raised in strict mode (the tests run in it); otherwise the node's outputs get unknown
    shapes, a warning, and an entry in ``Result.rule_failures``."""


class PinnedError(OnnxsymError):
    """A dim asked to be dynamic (``dynamic=``, ``--dynamic``) that the graph pins: the model,
    written with it symbolic, would fail at the other sizes it then declares. ``pins``: the
    :class:`onnxsym.domain.pins.Pin` of each, with the node that pins it."""

    def __init__(self, pins, places):
        self.pins = list(pins)
        what = "; ".join(f"{places.get(p.symbol, p.symbol)} cannot be dynamic: {p.describe()}" for p in self.pins)
        super().__init__(f"{what}; nothing written (the model would fail at the other sizes it would declare)")
