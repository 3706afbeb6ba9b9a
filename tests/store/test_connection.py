"""One way to reach a cluster: explicit values, then ELASTIC_*, then the deprecated spellings.

No test contacts a cluster: constructing the client object opens no connection.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pytest_soclab.cli import build_parser
from pytest_soclab.cli.harvest_cmd import make_client
from pytest_soclab.errors import SoclabError
from pytest_soclab.store.connection import EsConnection, build_client, resolve

ENV = {
    "ELASTIC_URL": "http://env.test:9200",
    "ELASTIC_API_KEY": "ZW52OmtleQ==",
    "ELASTIC_CA_CERTS": "",
}


def test_explicit_values_beat_the_environment_which_fills_in_the_rest() -> None:
    conn = EsConnection.from_env(ENV, url="http://cli.test:9200", api_key="Y2xpOmtleQ==", request_timeout=5)
    assert (conn.url, conn.api_key, conn.request_timeout) == ("http://cli.test:9200", "Y2xpOmtleQ==", 5)
    # None and "" mean "not given" (what argparse and pytest's ini defaults hand over)
    conn = EsConnection.from_env(ENV, url="", api_key=None, ca_certs="")
    assert (conn.url, conn.api_key, conn.ca_certs) == ("http://env.test:9200", "ZW52OmtleQ==", None)
    assert conn.verify_certs is True and conn.request_timeout == 30


def test_the_new_name_beats_the_old_ones_without_a_warning() -> None:
    env = {
        "ELASTIC_URL": "http://new.test:9200",
        "SOCLAB_ES_URL": "http://a.test:1",
        "ELASTICSEARCH_URL": "http://b.test:2",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert EsConnection.from_env(env).url == "http://new.test:9200"
        explicit = EsConnection.from_env({"SOCLAB_ES_URL": "http://a.test:1"}, url="http://cli.test:9200")
        assert explicit.url == "http://cli.test:9200"  # an explicit URL: the old name is not even read


@pytest.mark.parametrize("old", ["SOCLAB_ES_URL", "ELASTICSEARCH_URL"])
def test_an_old_name_still_works_and_warns_naming_the_new_one(old: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated: set ELASTIC_URL instead") as record:
        conn = resolve({old: "http://old.test:9200"})
    assert conn is not None and conn.url == "http://old.test:9200"
    assert record[0].filename == __file__  # the warning points at the caller, not at soclab's insides


def test_no_url_anywhere() -> None:
    assert resolve({"ELASTIC_API_KEY": "k"}) is None  # the pytest plugin then uses the embedded store
    with pytest.raises(SoclabError, match="ELASTIC_URL"):
        EsConnection.from_env({})
    with pytest.raises(TypeError, match="hosts"):
        EsConnection.from_env(ENV, hosts="x")


@pytest.mark.parametrize(
    ("explicit", "env", "message"),
    [
        ({"api_key": "k"}, {"ELASTIC_USERNAME": "elastic", "ELASTIC_PASSWORD": "pw"}, "not both"),
        ({"username": "elastic"}, {}, "a username needs a password"),
        ({}, {"ELASTIC_PASSWORD": "pw"}, "a password needs a username"),
        ({"ca_certs": "/nonexistent/ca.pem"}, {}, "CA certificate file not found"),
        ({"request_timeout": 0}, {}, "request_timeout"),
    ],
)
def test_inconsistent_settings_are_one_clear_error(
    explicit: dict[str, object], env: dict[str, str], message: str
) -> None:
    with pytest.raises(SoclabError, match=message):
        EsConnection.from_env({"ELASTIC_URL": "http://x.test:9200", **env}, **explicit)


def test_secrets_stay_out_of_the_repr() -> None:
    conn = EsConnection.from_env({}, url="http://x.test:9200", username="elastic", password="s3cret")
    assert "s3cret" not in repr(conn) and "elastic" in repr(conn)


def test_build_client_is_offline_and_carries_the_settings(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not checked until a TLS handshake\n")
    conn = EsConnection(url="https://x.test:9200", api_key="aWQ6a2V5", ca_certs=str(ca))
    client = build_client(conn)
    assert client._headers["authorization"] == "ApiKey aWQ6a2V5"
    assert client._max_retries == 0  # one clear failure per call
    node = client.transport.node_pool.all()[0].config
    assert (node.scheme, node.host, node.port, node.ca_certs) == ("https", "x.test", 9200, str(ca))
    client.close()
    basic = build_client(EsConnection(url="http://x.test:9200", username="u", password="p", verify_certs=False))
    assert basic._headers["authorization"].startswith("Basic ")
    assert basic.transport.node_pool.all()[0].config.verify_certs is False
    basic.close()
    with pytest.raises(SoclabError, match="bad Elasticsearch URL"):
        build_client(EsConnection(url="x.test"))


def test_harvest_reads_the_documented_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    unset = ("SOCLAB_ES_URL", "ELASTICSEARCH_URL", "ELASTIC_USERNAME", "ELASTIC_PASSWORD", "ELASTIC_CA_CERTS")
    for name in unset:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ELASTIC_URL", "http://env.test:9200")
    monkeypatch.setenv("ELASTIC_API_KEY", "ZW52OmtleQ==")
    args = build_parser().parse_args(["harvest", str(tmp_path / "task.json"), "--timeout", "7"])
    client = make_client(args)
    assert client.transport.node_pool.all()[0].config.host == "env.test"
    assert client._headers["authorization"] == "ApiKey ZW52OmtleQ==" and client._request_timeout == 7
    client.close()
