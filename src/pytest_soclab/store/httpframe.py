"""What the HTTP endpoint needs besides routing: header values that cannot split a response,
Elasticsearch's Warning format, error bodies in Elasticsearch's shape, exact body framing
(Content-Length, chunked, limits), optional authentication and date-math index names."""

from __future__ import annotations

import base64
import datetime as dt
import hmac
import json
import re
from dataclasses import dataclass
from typing import Any, BinaryIO

from pytest_soclab.errors import EsError

from .dsl.datemath import DateMathError, evaluate
from .limits import MAX_CONTENT_LENGTH, MAX_JSON_DEPTH, json_depth

# characters a header value keeps as they are: visible ASCII, space and tab (RFC 9110 field-vchar);
# everything else (CR, LF, NUL, other controls, non-ASCII) is percent-encoded as UTF-8
_SAFE = frozenset(chr(c) for c in range(0x20, 0x7F)) | {"\t"}


def header_value(text: str, *, percent: bool = False) -> str:
    """A header value that cannot end its line, forge a header or break latin-1 encoding. With
    `percent`, `%` itself is encoded too (Warning values, so that they decode back exactly); without,
    an already encoded value passes unchanged."""
    keep = _SAFE - {"%"} if percent else _SAFE
    if all(ch in keep for ch in text):
        return text
    return "".join(ch if ch in keep else _pct(ch) for ch in text)


def _pct(ch: str) -> str:
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))


def warning_header(text: str, version: str) -> str:
    """Elasticsearch's Warning value: `299 Elasticsearch-<version> "<text>"`, the text with `\\` and `"`
    escaped and any character outside visible ASCII percent-encoded (as its HeaderWarning does)."""
    quoted = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 Elasticsearch-{version}-soclab "{header_value(quoted, percent=True)}"'


def error_body(status: int, type_: str, reason: str) -> dict[str, Any]:
    return EsError(status, type_, reason).body()


class BodyError(Exception):
    """A request body the server refuses; `close` when the rest of the connection cannot be trusted."""

    def __init__(self, error: EsError, close: bool):
        super().__init__(error.reason)
        self.error = error
        self.close = close


def read_body(headers: Any, rfile: BinaryIO, limit: int = MAX_CONTENT_LENGTH) -> bytes:
    """The request body, framed exactly: Content-Length (digits only) or chunked, at most `limit`
    bytes. A refused body closes the connection (its unread bytes must not be read as a request)."""
    te = (headers.get("Transfer-Encoding") or "").strip().lower()
    cl = headers.get_all("Content-Length") if hasattr(headers, "get_all") else [headers.get("Content-Length")]
    cl = [c for c in (cl or []) if c is not None]
    if te:
        if cl:
            raise BodyError(EsError(400, "illegal_argument_exception", "request has both Transfer-Encoding and Content-Length"), True)
        if te != "chunked":
            raise BodyError(EsError(501, "illegal_argument_exception", f"unsupported Transfer-Encoding [{te}]"), True)
        return _read_chunked(rfile, limit)
    if not cl:
        return b""
    if len(set(c.strip() for c in cl)) != 1 or not re.fullmatch(r"[0-9]{1,19}", cl[0].strip()):
        raise BodyError(EsError(400, "illegal_argument_exception", f"invalid Content-Length [{header_value(cl[0])}]"), True)
    length = int(cl[0].strip())
    if length > limit:
        raise BodyError(_too_long(length, limit), True)
    data = rfile.read(length) if length else b""
    if len(data) != length:
        raise BodyError(EsError(400, "illegal_argument_exception", "request body ended before Content-Length bytes"), True)
    return data


def _too_long(length: int, limit: int) -> EsError:
    return EsError(413, "content_too_long_exception",
                   f"request body is too large: [{length}] bytes > [http.max_content_length] of [{limit}] bytes")  # fmt: skip


def _read_chunked(rfile: BinaryIO, limit: int) -> bytes:
    out = bytearray()
    while True:
        line = rfile.readline(1026)
        size_text = line.split(b";", 1)[0].strip()
        if not re.fullmatch(rb"[0-9A-Fa-f]{1,8}", size_text or b"x"):
            raise BodyError(EsError(400, "illegal_argument_exception", "malformed chunked body"), True)
        size = int(size_text, 16)
        if size == 0:
            while True:  # trailers up to the blank line
                trailer = rfile.readline(8192)
                if trailer in (b"\r\n", b"\n", b""):
                    return bytes(out)
        if len(out) + size > limit:
            raise BodyError(_too_long(len(out) + size, limit), True)
        chunk = rfile.read(size)
        if len(chunk) != size or rfile.readline(3) not in (b"\r\n", b"\n"):
            raise BodyError(EsError(400, "illegal_argument_exception", "malformed chunked body"), True)
        out += chunk


def parse_json(raw: bytes) -> tuple[bool, Any]:
    """(True, value) for a body; (False, None) when there is none. Bad JSON, or JSON nested deeper
    than the limit, is Elasticsearch's 400 x_content_parse_exception."""
    if not raw.strip():
        return False, None
    try:
        value = json.loads(raw)
    except RecursionError:
        raise _too_deep() from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise EsError(400, "x_content_parse_exception", f"[1:1] failed to parse request body: {exc}") from None
    if json_depth(value) > MAX_JSON_DEPTH:
        raise _too_deep()
    return True, value


def _too_deep() -> EsError:
    return EsError(400, "x_content_parse_exception",
                   f"[1:1] request body is nested deeper than the allowed [{MAX_JSON_DEPTH}] levels")  # fmt: skip


@dataclass(frozen=True)
class Auth:
    """Optional credentials of `soclab serve`: an API key (`Authorization: ApiKey <key>`) and/or
    basic auth (`user:password`). Compared in constant time."""

    api_key: str | None = None
    basic: str | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.api_key or self.basic)

    def allows(self, header: str | None) -> bool:
        if not self.enabled:
            return True
        scheme, _, cred = (header or "").strip().partition(" ")
        cred = cred.strip()
        if self.api_key and scheme.lower() == "apikey":
            return hmac.compare_digest(cred.encode(), self.api_key.encode()) or hmac.compare_digest(
                cred.encode(), base64.b64encode(self.api_key.encode())
            )
        if self.basic and scheme.lower() == "basic":
            try:
                given = base64.b64decode(cred, validate=True)
            except ValueError:
                return False
            return hmac.compare_digest(given, self.basic.encode())
        return False


def unauthorized() -> EsError:
    return EsError(401, "security_exception", "missing authentication credentials for REST request [soclab serve]")


_DATE_MATH = re.compile(r"\{([^{}]*)\}")


def resolve_date_math(name: str, now: dt.datetime) -> str:
    """`<logs-{now/d}>` -> `logs-2024.05.02` as Elasticsearch resolves date-math index names
    (`{now/d}`, `{now-1d/d}`, `{now/M{yyyy.MM}}`); other names unchanged."""
    if not (name.startswith("<") and name.endswith(">")):
        return name
    inner = name[1:-1]
    out: list[str] = []
    pos = 0
    while pos < len(inner):
        start = inner.find("{", pos)
        if start < 0:
            out.append(inner[pos:])
            break
        out.append(inner[pos:start])
        depth, end = 0, start
        for end in range(start, len(inner)):
            depth += {"{": 1, "}": -1}.get(inner[end], 0)
            if depth == 0:
                break
        if depth:
            raise _bad_date_math(name, "unbalanced {")
        expr = inner[start + 1 : end]
        fmt = "yyyy.MM.dd"
        m = re.fullmatch(r"(.*?)\{([^{}|]*)(?:\|[^{}]*)?\}", expr)
        if m:
            expr, fmt = m.group(1), m.group(2)
        try:
            ms = evaluate(expr, now)
        except DateMathError as exc:
            raise _bad_date_math(name, str(exc)) from None
        when = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)
        out.append(_java_date(when, fmt))
        pos = end + 1
    return "".join(out)


def _java_date(when: dt.datetime, fmt: str) -> str:
    table = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}
    return re.sub(r"yyyy|yy|MM|dd|HH|mm|ss", lambda m: when.strftime(table[m.group(0)]), fmt)


def _bad_date_math(name: str, why: str) -> EsError:
    return EsError(400, "illegal_argument_exception", f"invalid date math expression [{name}]: {why}")
