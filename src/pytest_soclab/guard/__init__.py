"""The Rego guard: policies evaluated on every tool call, behind one engine protocol."""
