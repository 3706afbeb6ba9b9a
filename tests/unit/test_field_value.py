"""`models.fields.field_value`: the one dotted-path getter, over nested and dotted-key documents."""

from __future__ import annotations

from pytest_soclab.models.fields import field_value


def test_nested_dotted_keys_and_mixes() -> None:
    assert field_value({"host": {"name": "a"}}, "host.name") == "a"
    assert field_value({"host.name": "b"}, "host.name") == "b"
    assert field_value({"process": {"parent.name": "c"}}, "process.parent.name") == "c"
    assert field_value({"process": {"parent": {"name": "d"}}}, "process.parent.name") == "d"


def test_missing_or_not_a_mapping_is_none() -> None:
    assert field_value({}, "host.name") is None
    assert field_value({"host": "x"}, "host.name") is None
    assert field_value({"host": ["x"]}, "host.name") is None
