"""Every test runs the engine in strict mode: a rule that raises fails the test instead of
leaving unknown shapes behind a warning (issue 12, item 6)."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def strict_rules():
    from onnxsym import engine

    saved, engine.STRICT = engine.STRICT, True
    yield
    engine.STRICT = saved
