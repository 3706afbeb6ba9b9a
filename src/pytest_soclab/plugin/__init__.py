"""The pytest wing: the only package that imports pytest.

`pytest11: soclab = pytest_soclab.plugin` loads this module; pluggy finds the hook
functions by name, so the hooks of `hooks.py` are re-exported here.
"""

from pytest_soclab.plugin.hooks import *  # noqa: F403
from pytest_soclab.plugin.hooks import __all__  # noqa: F401
