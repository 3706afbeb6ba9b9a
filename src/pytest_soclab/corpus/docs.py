"""The data streams of a case, and the blocks their documents share.

The document builders, one per data stream in the shapes the Elastic integrations index, are
per family: docs_endpoint.py (Elastic Defend, auth.log), docs_network.py (Zeek, Suricata),
docs_intel.py (threat intel). Each returns a fresh top-level dict; static blocks (`host`,
`agent`, `data_stream`, `ecs`, `event` categories) are shared between documents for speed:
treat generated documents as read-only (copy before changing one).
"""

from __future__ import annotations

from pytest_soclab.corpus.world import ECS_VERSION

PROC = "logs-endpoint.events.process-default"
NET = "logs-endpoint.events.network-default"
FILE = "logs-endpoint.events.file-default"
AUTH = "logs-system.auth-default"
ZEEK_CONN = "logs-zeek.connection-default"
ZEEK_DNS = "logs-zeek.dns-default"
ZEEK_HTTP = "logs-zeek.http-default"
ZEEK_SSL = "logs-zeek.ssl-default"
SURICATA = "logs-suricata.eve-default"
ALERTS = ".alerts-security.alerts-default"
TI_STREAMS = {
    "abusech.url": "logs-ti_abusech.url-default",
    "abusech.malware": "logs-ti_abusech.malware-default",
    "otx": "logs-ti_otx.threat-default",
    "misp": "logs-ti_misp.threat-default",
}
STREAMS: tuple[str, ...] = (
    PROC,
    NET,
    FILE,
    AUTH,
    ZEEK_CONN,
    ZEEK_DNS,
    ZEEK_HTTP,
    ZEEK_SSL,
    SURICATA,
    ALERTS,
    *TI_STREAMS.values(),
)


def dataset_of(stream: str) -> str:
    """logs-endpoint.events.process-default -> endpoint.events.process."""
    if stream.startswith("logs-") and stream.count("-") >= 2:
        return stream[5:].rsplit("-", 1)[0]
    return stream


def _ds(stream: str) -> dict[str, str]:
    return {"dataset": dataset_of(stream), "namespace": "default", "type": "logs"}


DS = {s: _ds(s) for s in STREAMS if s != ALERTS}
ECS = {"version": ECS_VERSION}
CATEGORY_NETWORK = ["network"]  # shared by the endpoint and the network sensors' events
