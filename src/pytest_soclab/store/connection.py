"""How soclab reaches a real Elasticsearch cluster: one settings model, one client builder.

Every entry point (the pytest plugin, `soclab harvest`, `soclab load`, the live backend) resolves
its connection here, from explicit values first and then the environment:

    ELASTIC_URL        cluster URL, e.g. https://localhost:9200
    ELASTIC_API_KEY    API key (base64 "id:key" form, as Kibana shows it)
    ELASTIC_USERNAME   basic-auth user (with ELASTIC_PASSWORD)
    ELASTIC_PASSWORD
    ELASTIC_CA_CERTS   path to a CA bundle (PEM)

Older spellings of the URL variable are still read, with a DeprecationWarning, when ELASTIC_URL
is unset. `build_client` is the only place that constructs an `elasticsearch.Elasticsearch`.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_soclab.errors import SoclabError

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch

# field -> (documented variable, deprecated spellings still read when it is unset, in this order)
ENV_VARS: dict[str, tuple[str, tuple[str, ...]]] = {
    "url": ("ELASTIC_URL", ("SOCLAB_ES_URL", "ELASTICSEARCH_URL")),
    "api_key": ("ELASTIC_API_KEY", ()),
    "username": ("ELASTIC_USERNAME", ()),
    "password": ("ELASTIC_PASSWORD", ()),
    "ca_certs": ("ELASTIC_CA_CERTS", ()),
}

_NO_URL = "no Elasticsearch URL: pass one (--es-url, --soclab-es-url) or set ELASTIC_URL"
# warnings.warn -> _env_value -> _resolve -> resolve/from_env -> their caller, whom the warning names
_CALLER = 4


class EsConnection(BaseModel):
    """A resolved, self-consistent connection to a cluster (nothing is contacted until a call)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    api_key: str | None = Field(default=None, repr=False)
    username: str | None = None
    password: str | None = Field(default=None, repr=False)
    ca_certs: str | None = None
    verify_certs: bool = True
    request_timeout: float = Field(default=30.0, gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> EsConnection:
        # SoclabError is not a ValueError, so pydantic lets it through as is: one line, no traceback
        if not self.url:
            raise SoclabError(_NO_URL)
        if self.api_key and (self.username or self.password):
            raise SoclabError(
                "give either an API key or a username/password, not both "
                "(ELASTIC_API_KEY or ELASTIC_USERNAME/ELASTIC_PASSWORD)"
            )
        if self.username and self.password is None:
            raise SoclabError("a username needs a password (ELASTIC_PASSWORD)")
        if self.password is not None and not self.username:
            raise SoclabError("a password needs a username (ELASTIC_USERNAME)")
        if self.ca_certs and not os.path.isfile(self.ca_certs):
            raise SoclabError(f"CA certificate file not found: {self.ca_certs}")
        return self

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ, **explicit: Any) -> EsConnection:
        """The connection from `explicit` values (None or "" = not given), else `environ`.

        No URL in either is an error.
        """
        conn = _resolve(environ, explicit)
        if conn is None:
            raise SoclabError(_NO_URL)
        return conn


def resolve(environ: Mapping[str, str] = os.environ, **explicit: Any) -> EsConnection | None:
    """As `EsConnection.from_env`, but None when neither the values nor the environment name a URL.

    This is how the pytest plugin decides between the embedded store and a live cluster.
    """
    return _resolve(environ, explicit)


def _resolve(environ: Mapping[str, str], explicit: dict[str, Any]) -> EsConnection | None:
    unknown = set(explicit) - set(EsConnection.model_fields)
    if unknown:
        raise TypeError(f"unknown connection settings: {', '.join(sorted(unknown))}")
    given = {k: v for k, v in explicit.items() if v is not None and v != ""}
    url = given.get("url") or _env_value(environ, "url")
    if not url:
        return None
    values: dict[str, Any] = {"url": url}
    for name in ENV_VARS:
        if name != "url":
            value = given.get(name) or _env_value(environ, name)
            if value:
                values[name] = value
    for name in ("verify_certs", "request_timeout"):
        if name in given:
            values[name] = given[name]
    try:
        return EsConnection(**values)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise SoclabError(f"bad Elasticsearch connection settings: {problems}") from None


def _env_value(environ: Mapping[str, str], name: str) -> str | None:
    new, old_names = ENV_VARS[name]
    if environ.get(new):
        return environ[new]
    for old in old_names:
        if environ.get(old):
            warnings.warn(f"{old} is deprecated: set {new} instead", DeprecationWarning, stacklevel=_CALLER)
            return environ[old]
    return None


def build_client(conn: EsConnection) -> Elasticsearch:
    """The official client for `conn`: no retries, so a failing call is one clear failure, not a storm."""
    # imported here, not at the top: the pytest plugin imports this module on every run, and most
    # runs use the embedded store and never pay for loading the client
    from elasticsearch import Elasticsearch

    kwargs: dict[str, Any] = {
        "request_timeout": conn.request_timeout,
        "max_retries": 0,
        "retry_on_timeout": False,
        "verify_certs": conn.verify_certs,
    }
    if conn.api_key:
        kwargs["api_key"] = conn.api_key
    if conn.username:
        kwargs["basic_auth"] = (conn.username, conn.password or "")
    if conn.ca_certs:
        kwargs["ca_certs"] = conn.ca_certs
    if not conn.verify_certs:
        kwargs["ssl_show_warn"] = False
    # the transport logs each failed attempt at WARNING: callers turn the failure into one error instead
    logging.getLogger("elastic_transport").setLevel(logging.ERROR)
    try:
        return Elasticsearch(hosts=[conn.url], **kwargs)
    except (ValueError, TypeError) as exc:
        raise SoclabError(f"bad Elasticsearch URL or options ({conn.url!r}): {exc}") from None
