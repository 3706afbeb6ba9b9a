"""The simulator: telemetry backend + response-action surface + guard + transcript, one per item."""
