"""The built-in shape rules, one module per operator family. Importing this
package registers them all."""

from . import elementwise, nn, reduce, shape_ops  # noqa: F401
from . import data_dependent, losses, ml, random, scatter_gather, strings, tensor_ops, training  # noqa: F401
from . import attention, image, quantize, recurrent, signal  # noqa: F401
from . import control_flow, optional, sequences  # noqa: F401
from . import contrib_attention, contrib_generation, contrib_misc, contrib_nchwc, contrib_norm, contrib_quant  # noqa: F401
from . import contrib_blocks, contrib_recurrent, contrib_sparse  # noqa: F401
