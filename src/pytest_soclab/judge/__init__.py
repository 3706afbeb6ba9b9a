"""Judges score a task's checkpoints from the answer key and the agent's transcript."""
