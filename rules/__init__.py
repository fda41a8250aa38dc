"""The built-in shape rules, one module per operator family. Importing this
package registers them all."""

from . import control_flow, elementwise, nn, optional, reduce, sequences, shape_ops  # noqa: F401
