"""The reference analyst behind the `playbook` agent (see docs/reference-agents.md).

Modules, one job each: tradecraft (generic Linux/SOC knowledge), store (reading telemetry through the
tools), state (what has been established), triage (where to start), trace (process trees, sessions,
lateral movement), network (web entry, outside addresses, DNS tunnels), context (telling the estate's
own work apart), verdict, response (proportionate containment) and report; core wires them together.
"""
