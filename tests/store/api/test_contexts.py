"""Scroll, point in time and async ES|QL: through the official client; per client, bounded, expiring."""

from __future__ import annotations

import time

import pytest
from elasticsearch import ApiError, Elasticsearch, NotFoundError
from store_testdata import PROC

from pytest_soclab.store.api import state as state_mod
from pytest_soclab.store.api.state import ApiState


def test_scroll_pages_through_everything(es: Elasticsearch) -> None:
    res = es.search(index=PROC, scroll="1m", size=3, sort=[{"@timestamp": "asc"}])
    seen = [h["_id"] for h in res["hits"]["hits"]]
    assert res["hits"]["hits"][0]["sort"] == [1714557600000]  # the tiebreaker is not shown
    sid = res["_scroll_id"]
    while True:
        res = es.scroll(scroll_id=sid, scroll="1m")
        if not res["hits"]["hits"]:
            break
        assert res["hits"]["total"]["value"] == 8
        seen += [h["_id"] for h in res["hits"]["hits"]]
    assert seen == [f"p{i}" for i in range(1, 9)]
    assert es.clear_scroll(scroll_id=sid)["num_freed"] == 1
    with pytest.raises(NotFoundError) as err:
        es.scroll(scroll_id=sid, scroll="1m")
    assert err.value.body["error"]["caused_by"]["type"] == "search_context_missing_exception"


def test_scroll_without_sort_and_with_query(es: Elasticsearch) -> None:
    res = es.search(index="logs-*", scroll="30s", size=4, query={"match": {"message": "bash"}})
    ids = [h["_id"] for h in res["hits"]["hits"]]
    assert "sort" not in res["hits"]["hits"][0] and res["hits"]["hits"][0]["_score"] > 0
    ids += [h["_id"] for h in es.scroll(scroll_id=res["_scroll_id"], scroll="30s")["hits"]["hits"]]
    assert sorted(ids) == ["p1", "p7", "p8"]
    with pytest.raises(ApiError) as err:
        es.search(index=PROC, scroll="1m", from_=2)
    assert err.value.meta.status == 400


def test_point_in_time_with_search_after(es: Elasticsearch) -> None:
    pit = es.open_point_in_time(index=PROC, keep_alive="1m")["id"]
    seen: list[str] = []
    after = None
    while True:
        kwargs = {"search_after": after} if after else {}
        res = es.search(pit={"id": pit, "keep_alive": "1m"}, size=3, sort=[{"host.name": "asc"}], **kwargs)
        assert res["pit_id"] == pit
        hits = res["hits"]["hits"]
        if not hits:
            break
        assert len(hits[0]["sort"]) == 2  # the implicit tiebreaker
        seen += [h["_id"] for h in hits]
        after = hits[-1]["sort"]
    assert sorted(seen) == [f"p{i}" for i in range(1, 9)] and len(seen) == 8
    with pytest.raises(ApiError) as err:
        es.search(index=PROC, pit={"id": pit})
    assert err.value.meta.status == 400
    assert es.close_point_in_time(id=pit)["num_freed"] == 1
    with pytest.raises(NotFoundError):
        es.search(pit={"id": pit})


def test_contexts_belong_to_their_client(es: Elasticsearch, url: str) -> None:
    res = es.search(index=PROC, scroll="1m", size=1)
    other = Elasticsearch(url, basic_auth=("someone", "else"))
    with pytest.raises(NotFoundError):
        other.scroll(scroll_id=res["_scroll_id"], scroll="1m")
    other.close()
    es.clear_scroll(scroll_id="_all")


def test_contexts_are_bounded_and_expire(monkeypatch: pytest.MonkeyPatch) -> None:
    state = ApiState()
    monkeypatch.setitem(state_mod.MAX_PER_CLIENT, "pit", 2)
    a = state.open("pit", "me", 0.05, {})
    state.open("pit", "me", 60, {})
    state.open("pit", "you", 60, {})
    with pytest.raises(Exception, match="too many pit contexts"):
        state.open("pit", "me", 60, {})
    time.sleep(0.1)
    assert state.get("pit", "me", a) is None  # expired, and its place is free again
    state.open("pit", "me", 60, {})
    with pytest.raises(Exception, match="too large"):
        state.open("pit", "me", 2 * 86400, {})


def test_async_esql(es: Elasticsearch) -> None:
    res = es.esql.async_query(query=f"FROM {PROC} | STATS c = COUNT(*)", wait_for_completion_timeout="60s")
    assert res["is_running"] is False and res["values"] == [[8]] and "id" not in res
    res = es.esql.async_query(query=f"FROM {PROC} | STATS c = COUNT(*) BY host.name | SORT host.name",
                              wait_for_completion_timeout="60s", keep_on_completion=True)  # fmt: skip
    key = res["id"]
    got = es.esql.async_query_get(id=key, wait_for_completion_timeout="60s")
    assert got["is_running"] is False and got["values"] == [[2, "db-01"], [4, "web-01"], [2, "ws-07"]]
    assert es.esql.async_query_delete(id=key)["acknowledged"] is True
    with pytest.raises(NotFoundError):
        es.esql.async_query_get(id=key)
    with pytest.raises(ApiError) as err:
        es.esql.async_query(query="FROM notes | WHERE", wait_for_completion_timeout="60s")
    assert err.value.meta.status == 400


def test_async_esql_still_running(es: Elasticsearch, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_soclab.store.api import esql_async

    real = esql_async._run

    def slow(req, body, job):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        real(req, body, job)

    monkeypatch.setattr(esql_async, "_run", slow)
    res = es.esql.async_query(query="FROM notes | STATS c = COUNT(*)", wait_for_completion_timeout="1ms")
    assert res["is_running"] is True and res["id"]
    got = es.esql.async_query_get(id=res["id"], wait_for_completion_timeout="60s")
    assert got["is_running"] is False and got["values"] == [[2]]
