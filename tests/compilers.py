"""The MLIR compilers of the mlir extra (iree-base-compiler, iree-base-runtime, torch-mlir,
ascendnpu-ir: about 1.2 GB). A test module that needs them imports this module before any of
theirs (``import compilers`` sorts first) and sets ``pytestmark = pytest.mark.compilers``:
without them the module is skipped, saying what to install; ``-m "not compilers"`` leaves it out."""

import pytest

REASON = "needs the MLIR compilers: pip install '.[mlir]'"

for _name in ("iree.compiler", "iree.runtime", "torch_mlir", "ascendnpuir"):
    pytest.importorskip(_name, reason=REASON)
