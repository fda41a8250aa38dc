"""Every test runs the engine in strict mode: a rule that raises fails the test instead of
leaving unknown shapes behind a warning (issue 12, item 6)."""

import contextlib

import pytest


@pytest.fixture(autouse=True, scope="session")
def strict_rules():
    from onnxsym.inference import engine

    saved, engine.STRICT = engine.STRICT, True
    yield
    engine.STRICT = saved


# A symbol's range is its environment's (onnxsym.dims.env): each test module's symbols are
# declared in an environment of its own, current while the module is collected (so that its
# module-level ``sym("h", 1, 4096)`` lands there), and each test runs in a copy of it, so that
# one test's ranges are never another's.
_module_envs: dict = {}
_collecting: dict[str, contextlib.ExitStack] = {}  # a module being collected -> what leaves its environment


def pytest_collectstart(collector):
    if isinstance(collector, pytest.Module):
        from onnxsym import dims

        _module_envs[collector.nodeid] = env = dims.RangeEnv(strict=False)
        stack = _collecting[collector.nodeid] = contextlib.ExitStack()
        stack.enter_context(env)


def pytest_collectreport(report):
    stack = _collecting.pop(report.nodeid, None)
    if stack is not None:
        stack.close()


@pytest.fixture(autouse=True)
def module_ranges(request):
    from onnxsym import dims

    env = _module_envs.get(request.node.nodeid.split("::")[0])
    with dims.RangeEnv(env.ranges if env is not None else None, strict=False):
        yield


@pytest.fixture(autouse=True, scope="session")
def no_terminal_width():
    """Tables fit ``COLUMNS`` when it is set (onnxsym.commands.table); pytest-xdist's workers
    have ``COLUMNS=80``, which the command line's tests run without (a test that wants a
    width sets it). So the tests read the same output with ``-n auto`` as without."""
    import os

    saved = os.environ.pop("COLUMNS", None)
    yield
    if saved is not None:
        os.environ["COLUMNS"] = saved
