"""Outputs: terminal summary, JUnit properties, pytest-html, results JSON."""
