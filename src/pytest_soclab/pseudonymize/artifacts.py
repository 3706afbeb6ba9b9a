"""Attacker-chosen file and process names in a case's documents, for variants to re-key.

An intruder names what they drop: `/tmp/.sysupdate`, `uploads/thumb_8842.php`,
`~/.local/share/dbus-helper/dbus-helper`, `C:\\Users\\x\\Downloads\\payload_x64.exe`. Such names
identify one intrusion as surely as its addresses do, so a model that memorised a public case
would recognise its variant by them. What the operating system, a package or an application
ships keeps its name: it is knowledge an analyst is expected to have, not an answer.

The rule is general (no case's names are listed): a name is taken when its file sits where
anyone can write (temporary and shared-memory directories, home directories, upload directories,
Windows' Temp, Downloads, AppData, ProgramData and Public folders, but not a per-user install's
folder under AppData), and the name is one that
people make up rather than one the system uses: hidden (a leading dot), or holding a digit, a
dash or an underscore. Only the file's own name and its hidden directories count; well-known
dot-directories (`.ssh`, `.config`, ...) and runtime names (`__init__`, sockets of systemd) do not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from pytest_soclab.models.fields import field_value
from pytest_soclab.pseudonymize.names import learnable

# Fields that hold one path or one file name each (ECS; Sysmon's through the Windows integration).
PATH_FIELDS = ("file.path", "file.name", "process.executable", "process.name", "process.parent.executable",
               "process.parent.name", "process.working_directory", "dll.path")  # fmt: skip
# Fields of free text whose paths count too (a file only named in a command: `tar czf /tmp/.x/a.tgz`).
TEXT_FIELDS = ("process.command_line", "process.args")

_UNIX_PATH = re.compile(r"(?<![\w/.~-])(?:~|/)[\w.@%+=,~-]*(?:/[\w.@%+=,~-]+)+")
_WIN_PATH = re.compile(r"(?<![\w])[A-Za-z]:\\[^\s\"'|<>*?]+")
_STEM = re.compile(r"^\.?([^.]+)")
# a made-up name with a random suffix, as build and temporary directories get them
# (`requests-toolbelt-ng_8c1f` for the package `requests-toolbelt-ng`): group 1 is the name
_RANDOM_SUFFIX = re.compile(r"^(.+?)[-_](?=[0-9a-f]*\d)[0-9a-f]{4,}$")

WRITABLE_UNIX = ("/tmp/", "/var/tmp/", "/dev/shm/", "/home/", "/root/", "~/", "/run/user/")
WRITABLE_WINDOWS = ("\\temp\\", "\\tmp\\", "\\downloads\\", "\\appdata\\", "\\programdata\\", "\\users\\public\\",
                    "\\desktop\\", "\\documents\\", "\\perflogs\\")  # fmt: skip
# Inside a writable place, where per-user installs put what they ship (Windows' counterpart of
# Program Files for one user: Python, editors, store apps' aliases): those names are the vendor's.
INSTALLED_WINDOWS = ("\\appdata\\local\\programs\\", "\\appdata\\local\\microsoft\\windowsapps\\")
UPLOAD_DIRS = frozenset({"upload", "uploads", "media", "files", "tmp", "temp", "cache"})
# Dot-directories and files that programs create: kept as they are.
WELL_KNOWN = frozenset(
    """
    ssh aws azure config local cache gnupg kube docker npm pip git git-credentials gitconfig bashrc
    bash_profile bash_history bash_logout profile zshrc zsh_history viminfo vimrc wget-hsts lesshst
    python_history mysql_history psql_history pgpass netrc env htaccess htpasswd well-known x11-unix
    ice-unix font-unix test-unix xim-unix mozilla thunderbird vscode cargo rustup m2 gradle sudo_as_admin_successful
    selected_editor dbus pki java ansible terraform gem bundle yarn node_modules lock tracker-extract
    dbus-session pulse xdg-runtime authorized_keys authorized_keys2 known_hosts id_rsa id_dsa id_ecdsa id_ed25519
    id_rsa-cert ssh-agent
    """.split()
)
# Runtime names with a made-up look that tools generate: Ansible's module payloads, systemd's
# private directories, editors' swap files.
_TOOL_PREFIXES = ("ansiballz_", "systemd-private-", "ansible-tmp-", "tmp")


def _stem(name: str) -> str:
    m = _STEM.match(name)
    return m.group(1) if m else ""


def _made_up(name: str) -> bool:
    """Whether a file name looks chosen by a person (hidden, digits, dashes, underscores)."""
    stem = _stem(name).lower()
    if len(stem) < 2 or stem in WELL_KNOWN or stem.startswith(("_", "-", *_TOOL_PREFIXES)) or stem.isdigit():
        return False
    if not learnable(stem):  # a content hash or other identifier (Defender's scan store): kept, as identifiers are
        return False
    return name.startswith(".") or any(c.isdigit() or c in "-_" for c in stem)


def _hidden_letter(name: str) -> str | None:
    """A hidden file named by one letter or digit (`.k`, `.s.sql`): too short to be replaced as a
    word (every `k` of a text would change), so it is learned with its dot, as `.k`, and replaced
    only where a word starts with that dot (pseudonymize/text.py)."""
    stem = _stem(name)
    return "." + stem.lower() if name.startswith(".") and len(stem) == 1 and stem.isalnum() else None


def path_names(path: str) -> Iterator[str]:
    """The made-up names of one path in a writable place: its file's stem, its hidden directories'."""
    windows = "\\" in path
    parts = [p for p in re.split(r"[\\/]", path) if p]
    if not parts:
        return
    low = path.lower()
    if windows:
        writable = any(w in low for w in WRITABLE_WINDOWS) and not any(w in low for w in INSTALLED_WINDOWS)
    else:
        writable = low.startswith(WRITABLE_UNIX) or any(p.lower() in UPLOAD_DIRS for p in parts[:-1])
    if not writable:
        return
    last = parts[-1].split("?", 1)[0]
    for part in [*(d for d in parts[1:-1] if d.startswith(".")), last]:  # hidden directories, the file
        if _made_up(part):
            yield _stem(part)
            named = _RANDOM_SUFFIX.match(_stem(part))
            if named and _made_up(named.group(1)):
                yield named.group(1)
        elif (hidden := _hidden_letter(part)) is not None:
            yield hidden


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        yield from (v for v in value if isinstance(v, str))


class ArtifactNames:
    """Collects the made-up file names of documents (each distinct string is read once)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._seen: set[str] = set()

    def learn(self, doc: dict[str, Any]) -> None:
        for name in PATH_FIELDS:
            for s in _strings(field_value(doc, name)):
                self._path(s)
        for name in TEXT_FIELDS:
            for s in _strings(field_value(doc, name)):
                if s in self._seen:
                    continue
                self._seen.add(s)
                for m in _UNIX_PATH.finditer(s):
                    self._path(m.group(0))
                for m in _WIN_PATH.finditer(s):
                    self._path(m.group(0))

    def _path(self, s: str) -> None:
        if s in self._seen:
            return
        self._seen.add(s)
        if "/" in s or "\\" in s:
            self.names.update(path_names(s))
