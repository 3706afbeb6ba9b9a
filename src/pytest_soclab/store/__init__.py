"""Telemetry backends behind one protocol: embedded (DuckDB) and live (Elasticsearch)."""
