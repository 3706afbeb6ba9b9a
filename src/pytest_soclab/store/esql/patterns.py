"""DISSECT and GROK patterns as RE2 regular expressions (capture groups in output order)."""

from __future__ import annotations

import re

# A subset of the legacy grok pattern bank, rewritten for RE2 (no lookaround, no atomic groups).
GROK_PATTERNS: dict[str, str] = {
    "USERNAME": r"[a-zA-Z0-9._-]+",
    "USER": r"%{USERNAME}",
    "EMAILLOCALPART": r"[a-zA-Z0-9!#$%&'*+\-/=?^_`{|}~]{1,64}(?:\.[a-zA-Z0-9!#$%&'*+\-/=?^_`{|}~]{1,62}){0,63}",
    "EMAILADDRESS": r"%{EMAILLOCALPART}@%{HOSTNAME}",
    "INT": r"(?:[+-]?(?:[0-9]+))",
    "BASE10NUM": r"(?:[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+))",
    "NUMBER": r"(?:%{BASE10NUM})",
    "BASE16NUM": r"(?:[+-]?(?:0x)?(?:[0-9A-Fa-f]+))",
    "BASE16FLOAT": r"\b[+-]?(?:0x)?(?:(?:[0-9A-Fa-f]+(?:\.[0-9A-Fa-f]*)?)|(?:\.[0-9A-Fa-f]+))\b",
    "POSINT": r"\b(?:[1-9][0-9]*)\b",
    "NONNEGINT": r"\b(?:[0-9]+)\b",
    "WORD": r"\b\w+\b",
    "NOTSPACE": r"\S+",
    "SPACE": r"\s*",
    "DATA": r".*?",
    "GREEDYDATA": r".*",
    "QUOTEDSTRING": r"(?:\"(?:\\.|[^\\\"])*\"|'(?:\\.|[^\\'])*'|`(?:\\.|[^\\`])*`)",
    "QS": r"%{QUOTEDSTRING}",
    "UUID": r"[A-Fa-f0-9]{8}-(?:[A-Fa-f0-9]{4}-){3}[A-Fa-f0-9]{12}",
    "URN": r"urn:[0-9A-Za-z][0-9A-Za-z-]{0,31}:(?:%[0-9a-fA-F]{2}|[0-9A-Za-z()+,.:=@;$_!*'/?#-])+",
    "CISCOMAC": r"(?:(?:[A-Fa-f0-9]{4}\.){2}[A-Fa-f0-9]{4})",
    "WINDOWSMAC": r"(?:(?:[A-Fa-f0-9]{2}-){5}[A-Fa-f0-9]{2})",
    "COMMONMAC": r"(?:(?:[A-Fa-f0-9]{2}:){5}[A-Fa-f0-9]{2})",
    "MAC": r"(?:%{CISCOMAC}|%{WINDOWSMAC}|%{COMMONMAC})",
    "IPV4": r"(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9]{1,2})\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9]{1,2})",
    "IPV6": r"(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,7}:|(?:[0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}"
    r"|(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}|(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}"
    r"|(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}|(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}"
    r"|[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}|:(?:(?::[0-9A-Fa-f]{1,4}){1,7}|:)"
    r"|(?:[0-9A-Fa-f]{1,4}:){6}%{IPV4}|::(?:[fF]{4}:)?%{IPV4})(?:%[0-9A-Za-z]+)?",
    "IP": r"(?:%{IPV6}|%{IPV4})",
    "HOSTNAME": r"\b(?:[0-9A-Za-z][0-9A-Za-z-]{0,62})(?:\.(?:[0-9A-Za-z][0-9A-Za-z-]{0,62}))*\.?",
    "HOST": r"%{HOSTNAME}",
    "IPORHOST": r"(?:%{IP}|%{HOSTNAME})",
    "HOSTPORT": r"%{IPORHOST}:%{POSINT}",
    "UNIXPATH": r"(?:/[\w_%!$@:.,+~-]*)+",
    "TTY": r"(?:/dev/(?:pts|tty(?:[pq])?)(?:\w+)?/?(?:[0-9]+))",
    "WINPATH": r"(?:[A-Za-z]+:|\\)(?:\\[^\\?*]*)+",
    "PATH": r"(?:%{UNIXPATH}|%{WINPATH})",
    "URIPROTO": r"[A-Za-z](?:[A-Za-z0-9+\-.]+)+",
    "URIHOST": r"%{IPORHOST}(?::%{POSINT})?",
    "URIPATH": r"(?:/[A-Za-z0-9$.+!*'(){},~:;=@#%&_\-]*)+",
    "URIPARAM": r"\?[A-Za-z0-9$.+!*'|(){},~@#%&/=:;_?\-\[\]<>]*",
    "URIPATHPARAM": r"%{URIPATH}(?:%{URIPARAM})?",
    "URI": r"%{URIPROTO}://(?:%{USER}(?::[^@]*)?@)?(?:%{URIHOST})?(?:%{URIPATHPARAM})?",
    "MONTH": r"\b(?:[Jj]an(?:uary|uar)?|[Ff]eb(?:ruary|ruar)?|[Mm](?:a|ä)?r(?:ch|z)?|[Aa]pr(?:il)?|[Mm]a(?:y|i)?"
    r"|[Jj]un(?:e|i)?|[Jj]ul(?:y|i)?|[Aa]ug(?:ust)?|[Ss]ep(?:tember)?|[Oo](?:c|k)?t(?:ober)?|[Nn]ov(?:ember)?"
    r"|[Dd]e(?:c|z)(?:ember)?)\b",
    "MONTHNUM": r"(?:0?[1-9]|1[0-2])",
    "MONTHNUM2": r"(?:0[1-9]|1[0-2])",
    "MONTHDAY": r"(?:(?:0[1-9])|(?:[12][0-9])|(?:3[01])|[1-9])",
    "DAY": r"(?:Mon(?:day)?|Tue(?:sday)?|Wed(?:nesday)?|Thu(?:rsday)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)",
    "YEAR": r"(?:\d\d){1,2}",
    "HOUR": r"(?:2[0123]|[01]?[0-9])",
    "MINUTE": r"(?:[0-5][0-9])",
    "SECOND": r"(?:(?:[0-5]?[0-9]|60)(?:[:.,][0-9]+)?)",
    "TIME": r"%{HOUR}:%{MINUTE}(?::%{SECOND})?",
    "DATE_US": r"%{MONTHNUM}[/-]%{MONTHDAY}[/-]%{YEAR}",
    "DATE_EU": r"%{MONTHDAY}[./-]%{MONTHNUM}[./-]%{YEAR}",
    "ISO8601_TIMEZONE": r"(?:Z|[+-]%{HOUR}(?::?%{MINUTE}))",
    "ISO8601_SECOND": r"%{SECOND}",
    "TIMESTAMP_ISO8601": r"%{YEAR}-%{MONTHNUM}-%{MONTHDAY}[T ]%{HOUR}:?%{MINUTE}(?::?%{SECOND})?%{ISO8601_TIMEZONE}?",
    "DATE": r"(?:%{DATE_US}|%{DATE_EU})",
    "DATESTAMP": r"%{DATE}[- ]%{TIME}",
    "TZ": r"(?:[APMCE][SD]T|UTC)",
    "DATESTAMP_RFC822": r"%{DAY} %{MONTH} %{MONTHDAY} %{YEAR} %{TIME} %{TZ}",
    "DATESTAMP_OTHER": r"%{DAY} %{MONTH} %{MONTHDAY} %{TIME} %{TZ} %{YEAR}",
    "HTTPDATE": r"%{MONTHDAY}/%{MONTH}/%{YEAR}:%{TIME} %{INT}",
    "SYSLOGTIMESTAMP": r"%{MONTH} +%{MONTHDAY} %{TIME}",
    "PROG": r"[\x21-\x5a\x5c\x5e-\x7e]+",
    "SYSLOGPROG": r"%{PROG:program}(?:\[%{POSINT:pid}\])?",
    "SYSLOGHOST": r"%{IPORHOST}",
    "SYSLOGFACILITY": r"<%{NONNEGINT:facility}.%{NONNEGINT:priority}>",
    "SYSLOGBASE": r"%{SYSLOGTIMESTAMP:timestamp} (?:%{SYSLOGFACILITY} )?%{SYSLOGHOST:logsource} %{SYSLOGPROG}:",
    "LOGLEVEL": r"(?:[Aa]lert|ALERT|[Tt]race|TRACE|[Dd]ebug|DEBUG|[Nn]otice|NOTICE|[Ii]nfo?(?:rmation)?|INFO?(?:RMATION)?"
    r"|[Ww]arn?(?:ing)?|WARN?(?:ING)?|[Ee]rr?(?:or)?|ERR?(?:OR)?|[Cc]rit?(?:ical)?|CRIT?(?:ICAL)?|[Ff]atal|FATAL"
    r"|[Ss]evere|SEVERE|EMERG(?:ENCY)?|[Ee]merg(?:ency)?)",
    "HTTPDUSER": r"(?:%{EMAILADDRESS}|%{USER})",
    "COMMONAPACHELOG": r"%{IPORHOST:clientip} %{HTTPDUSER:ident} %{USER:auth} \[%{HTTPDATE:timestamp}\] "
    r"\"(?:%{WORD:verb} %{NOTSPACE:request}(?: HTTP/%{NUMBER:httpversion})?|%{DATA:rawrequest})\" "
    r"%{NUMBER:response} (?:%{NUMBER:bytes}|-)",
    "COMBINEDAPACHELOG": r"%{COMMONAPACHELOG} %{QS:referrer} %{QS:agent}",
}

_TYPES = {"int": "integer", "integer": "integer", "long": "long", "float": "double", "double": "double",
          "boolean": "boolean", "string": "keyword"}  # fmt: skip
_REF = re.compile(r"%\{([A-Za-z0-9_]+)(?::([^:}]+))?(?::([A-Za-z]+))?\}")


def grok_regex(pattern: str) -> tuple[str, list[str], dict[str, str]]:
    """(RE2 regex with one capturing group per named capture, names in group order, types)."""
    names: list[str] = []
    types: dict[str, str] = {}
    regex = _expand(pattern, names, types, depth=0)
    if not names:
        raise ValueError("the pattern has no named captures")
    try:
        re.compile(regex.replace("\\x{", "\\u{"))
    except re.error:
        pass  # RE2 has its own syntax; DuckDB validates it
    return regex, names, types


def _expand(pattern: str, names: list[str], types: dict[str, str], depth: int) -> str:
    if depth > 30:
        raise ValueError("pattern definitions nest too deeply")
    out: list[str] = []
    pos = 0
    for m in _REF.finditer(pattern):
        out.append(_raw(pattern[pos : m.start()], names))
        pos = m.end()
        syntax, semantic, typ = m.group(1), m.group(2), m.group(3)
        body = GROK_PATTERNS.get(syntax)
        if body is None:
            raise ValueError(f"Unable to find pattern [{syntax}] in Grok's pattern dictionary")
        if semantic:
            names.append(semantic)
            if typ:
                if typ.lower() not in _TYPES:
                    raise ValueError(f"unsupported grok type [{typ}]")
                types[semantic] = _TYPES[typ.lower()]
            inner_names: list[str] = []
            inner = _expand(body, inner_names, {}, depth + 1)
            # nested captures of a named pattern are not exposed (the outer name wins)
            inner = _decapture(inner)
            out.append(f"({inner})")
        else:
            out.append("(?:" + _expand(body, names, types, depth + 1) + ")")
    out.append(_raw(pattern[pos:], names))
    return "".join(out)


def _raw(text: str, names: list[str]) -> str:
    """Literal regex parts of a grok pattern: Oniguruma named groups become numbered captures."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("(?<", i) and not text.startswith("(?<=", i) and not text.startswith("(?<!", i):
            j = text.find(">", i)
            if j < 0:
                raise ValueError("unterminated named group")
            names.append(text[i + 3 : j])
            out.append("(")
            i = j + 1
            continue
        if text[i] == "\\" and i + 1 < len(text):
            out.append(text[i : i + 2])
            i += 2
            continue
        if text[i] == "(" and not text.startswith("(?", i):
            out.append("(?:")
            i += 1
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _decapture(regex: str) -> str:
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(regex):
        ch = regex[i]
        if ch == "\\" and i + 1 < len(regex):
            out.append(regex[i : i + 2])
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        if ch == "(" and not in_class and not regex.startswith("(?", i):
            out.append("(?:")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_DISSECT_KEY = re.compile(r"%\{([^}]*)\}")


def dissect_regex(pattern: str) -> tuple[str, list[str], dict[str, list[str]]]:
    """(anchored RE2 regex, output name per capture group ("" = skipped), append groups)."""
    keys = list(_DISSECT_KEY.finditer(pattern))
    if not keys:
        raise ValueError("Unable to find any keys")
    parts = ["^"]
    names: list[str] = []
    appends: dict[str, list[str]] = {}
    pos = 0
    literal_after: list[str] = []
    for i, m in enumerate(keys):
        literal_after.append(pattern[m.end() : keys[i + 1].start() if i + 1 < len(keys) else len(pattern)])
    parts.append(re.escape(pattern[: keys[0].start()]).replace("\\ ", " "))
    del pos
    for i, m in enumerate(keys):
        key = m.group(1)
        pad = key.endswith("->")
        if pad:
            key = key[:-2]
        name = key
        if key.startswith("?") or key == "":
            name = ""
        elif key.startswith("+"):
            name = key[1:].split("/")[0]
            appends.setdefault(name, []).append(name)
        elif key.startswith(("*", "&")):
            raise ValueError("reference keys (%{*key} / %{&key}) are not supported")
        last = i == len(keys) - 1
        lit = literal_after[i]
        parts.append("(.*)" if last and not lit else "(.*?)")
        names.append(name)
        if lit:
            esc = re.escape(lit).replace("\\ ", " ")
            parts.append(f"(?:{esc})+" if pad else esc)
    parts.append("$")
    return "".join(parts), names, appends
