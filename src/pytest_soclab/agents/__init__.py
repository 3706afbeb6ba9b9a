"""Agents: the contract, adapters onto it, and the reference agents."""
