"""Reading the report: what it names, and what it clears."""

from __future__ import annotations

from pytest_soclab.judge.report_text import ReportText, is_clearing
from pytest_soclab.models.report import AgentReport, Findings


def rt(md: str, findings: dict | None = None) -> ReportText:
    return ReportText(AgentReport(markdown=md, findings=Findings(**findings) if findings else None))


def test_clearing_sentences() -> None:
    assert is_clearing("db-01 shows no sign of compromise.")
    assert is_clearing("The scanner at 10.10.0.40 is benign")
    assert is_clearing("dc-01 was not involved")
    assert not is_clearing("This is not benign: web-01 runs an implant")
    assert not is_clearing("web-01 is compromised")


def test_mentions_honour_clearing_per_sentence() -> None:
    r = rt("web-01 is compromised; db-01 is benign. The scanner 10.10.0.40 is a false positive.")
    assert r.mentions("web-01")
    assert not r.mentions("db-01")
    assert r.cleared("db-01")
    assert r.ips() == set()


def test_ruled_out_section_clears_its_list() -> None:
    md = "## Implicated\n- web-01\n- app-02\n\n## Ruled out\n- db-01\n- dc-01\n\n## Next\n- backup-01 needs review\n"
    r = rt(md)
    assert r.named(["web-01", "app-02", "db-01", "dc-01", "backup-01"]) == {"web-01", "app-02", "backup-01"}


def test_list_intro_line_clears_until_blank_line() -> None:
    r = rt("These hosts are unrelated:\n- db-01\n- dc-01\n\nCompromised: web-01\n")
    assert r.named(["db-01", "dc-01", "web-01"]) == {"web-01"}


def test_findings_are_read_field_by_field() -> None:
    r = rt("Short report.", {"implicated_hosts": ["web-01"], "attacker_ips": ["185.220.101.34"],
                             "root_cause": "Brute force. db-01 is not involved."})
    assert r.mentions("web-01") and r.mentions("185.220.101.34")
    assert not r.mentions("db-01")


def test_ips_and_paths() -> None:
    r = rt("Seen: 185.220.101.34:22, 10.10.0.0/16 range, 999.1.1.1, 127.0.0.1 and /tmp/.sysupdate. "
           "URL http://x.example/a/b ignored. C:\\Windows\\Temp\\a.exe too.")
    assert r.ips() == {"185.220.101.34"}
    assert "/tmp/.sysupdate" in r.paths()
    assert "C:\\Windows\\Temp\\a.exe" in r.paths()
    assert not any(p.startswith("/a") for p in r.paths())


def test_windows_switches_are_not_paths() -> None:
    r = rt('Ran `schtasks.exe /Create /F /TN x` and `tasklist /fi "x"`; wrote /etc/cron.d/x and /tmp.')
    assert r.paths() == {"/etc/cron.d/x", "/tmp"}


def test_indicators_that_matched_nothing_are_cleared() -> None:
    """A threat-intel sweep reports which indicators matched nothing: naming them is no attribution."""
    r = rt("Only 198.51.100.177 matched.\n\nIndicators with no match:\n- 203.0.113.250\n- 192.0.2.99\n\n"
           "The feed's 198.51.100.99 and evil.example.net were never seen in the telemetry. "
           "203.0.113.251 did not match any connection.")
    assert r.ips() == {"198.51.100.177"}
    assert is_clearing("No hits for 203.0.113.7 in zeek dns.")
    assert not is_clearing("198.51.100.177 matched the feed: web-01 beacons to it.")
    assert not is_clearing("/tmp/.x is a binary never seen before on web-01.")
