"""The holdout tasks are data for tests/agents/test_playbook_windows.py, not benchmark items of this test run."""

collect_ignore_glob = ["tasks/*.json"]
