"""The suite's shared setup: plain ``assert`` in the helper modules reports like in a test module."""

import pytest

pytest.register_assert_rewrite("tests.core.rules_helpers", "tests.envs.aec_helpers")
