# The plugin's own tests drive pytest runs through pytester; `pytest_plugins` is only
# honoured in the rootdir's conftest.py.
pytest_plugins = ["pytester"]
