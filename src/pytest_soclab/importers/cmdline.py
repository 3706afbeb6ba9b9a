"""Windows command-line splitting into `process.args`, by the documented CommandLineToArgvW rules.

Rules: whitespace separates arguments outside quotes; `2n` backslashes before a quote give `n`
backslashes and the quote toggles quoting; `2n+1` backslashes give `n` and a literal quote; other
backslashes are literal; inside quotes, a doubled quote is a literal quote (the pre-2008 rule that
Elastic's pipeline also follows).
"""

from __future__ import annotations


def split_windows(cmd: str) -> list[str]:
    args: list[str] = []
    i, n = 0, len(cmd)
    while i < n:
        while i < n and cmd[i] in " \t":
            i += 1
        if i >= n:
            break
        buf: list[str] = []
        quoted = False
        slashes = 0
        while i < n:
            c = cmd[i]
            if c == "\\":
                slashes += 1
                i += 1
                continue
            if c == '"':
                buf.append("\\" * (slashes // 2))
                if slashes % 2:
                    buf.append('"')
                elif quoted and i + 1 < n and cmd[i + 1] == '"':
                    buf.append('"')
                    i += 1
                else:
                    quoted = not quoted
                slashes = 0
                i += 1
                continue
            buf.append("\\" * slashes)
            slashes = 0
            if c in " \t" and not quoted:
                break
            buf.append(c)
            i += 1
        buf.append("\\" * slashes)
        args.append("".join(buf))
    return args


def split_posix(cmd: str) -> list[str]:
    """Linux command lines as Sysmon for Linux writes them: already joined by spaces, no quoting to undo."""
    return cmd.split()
