"""Pydantic models at the edges: what files, agents and results look like. They know no other module."""
