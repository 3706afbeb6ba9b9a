"""Generic Windows tradecraft: what an analyst knows about Windows before reading any case.

Pure functions and constants: where Windows keeps its own binaries and where users (and implants) can
write, the session boundaries of a process tree, what an access mask on lsass.exe means, which
command lines dump credentials, change the firewall, hijack a service, persist in the registry or only
look around, which offensive tools go by their public names, and which of Windows' own jobs look
alarming but are not (network diagnostics, log resets). Nothing here names a host, an account, an
address or a file of any particular estate.
"""

from __future__ import annotations

import base64
import re

from pytest_soclab.agents.analyst.store import as_list
from pytest_soclab.agents.analyst.tradecraft import Behaviour

# --------------------------------------------------------------------------- locations and roles

# Places any user can write: nothing Windows installs runs from there.
_USER_WRITABLE = re.compile(
    r"\\users\\[^\\]+\\(?:downloads|desktop|documents|music|pictures|videos|appdata|favorites)\\"
    r"|\\appdata\\|\\temp\\|\\tmp\\|\\programdata\\|\\users\\public\\|\\perflogs\\|\\\$recycle\.bin\\"
    r"|\\windows\\tasks\\|\\windows\\debug\\|\\windows\\tracing\\",
    re.IGNORECASE)
_SYSTEM_DIRS = re.compile(r"^[a-z]:\\windows\\(?:system32|syswow64|winsxs|servicing|explorer\.exe|immersivecontrolpanel)",
                          re.IGNORECASE)
_PROGRAM_DIRS = re.compile(r"^[a-z]:\\program files(?: \(x86\))?\\", re.IGNORECASE)

# Where a process tree stops being the attacker's: the desktop shell, the service manager, WMI, COM.
SESSION_BOUNDARIES = frozenset({"explorer.exe", "services.exe", "svchost.exe", "wininit.exe", "winlogon.exe",
                                "userinit.exe", "smss.exe", "csrss.exe", "system", "wmiprvse.exe", "taskeng.exe",
                                "taskhostw.exe", "sihost.exe", "runtimebroker.exe", "dllhost.exe", "lsass.exe"})
SHELLS = frozenset({"cmd.exe", "powershell.exe", "pwsh.exe", "powershell_ise.exe", "wscript.exe", "cscript.exe",
                    "mshta.exe", "wmic.exe"})
# Windows' built-in service accounts: never an attacker's account to disable.
SYSTEM_ACCOUNTS = frozenset({"system", "local service", "network service", "localsystem", "anonymous logon",
                             "dwm-1", "dwm-2", "umfd-0", "umfd-1", "-"})

# Public offensive tools, by the names they ship under (substring of the image's file name, lowercase).
OFFENSIVE_TOOLS: tuple[tuple[str, str, str], ...] = (
    ("mimikatz", "credential dumper (Mimikatz)", "T1003.001"),
    ("sharpdump", "LSASS dumper (SharpDump)", "T1003.001"),
    ("dumpert", "LSASS dumper (Dumpert)", "T1003.001"),
    ("nanodump", "LSASS dumper (nanodump)", "T1003.001"),
    ("procdump", "Sysinternals ProcDump", "T1003.001"),
    ("lazagne", "credential harvester (LaZagne)", "T1555"),
    ("rubeus", "Kerberos abuse tool (Rubeus)", "T1558"),
    ("seatbelt", "host survey tool (Seatbelt)", "T1082"),
    ("sharphound", "AD collector (SharpHound)", "T1087.002"),
    ("bloodhound", "AD collector (BloodHound)", "T1087.002"),
    ("adfind", "AD query tool (AdFind)", "T1087.002"),
    ("sharpsc", "remote service tool (SharpSC)", "T1569.002"),
    ("psexe", "remote execution (PsExec)", "T1569.002"),
    ("paexec", "remote execution (PAExec)", "T1569.002"),
    ("grunt", "Covenant implant (grunt)", "T1071.001"),
    ("beacon", "implant (beacon)", "T1071.001"),
    ("meterpreter", "Metasploit implant", "T1071.001"),
    ("cobaltstrike", "Cobalt Strike implant", "T1071.001"),
    ("winpeas", "privilege-escalation survey (winPEAS)", "T1082"),
    ("sharpup", "privilege-escalation survey (SharpUp)", "T1082"),
    ("powerview", "AD discovery (PowerView)", "T1087.002"),
    ("kerbrute", "Kerberos brute force (kerbrute)", "T1110"),
)

DISCOVERY = frozenset({"whoami.exe", "systeminfo.exe", "tasklist.exe", "ipconfig.exe", "net.exe", "net1.exe",
                       "nltest.exe", "quser.exe", "qwinsta.exe", "netstat.exe", "hostname.exe", "arp.exe",
                       "route.exe", "klist.exe", "nslookup.exe", "query.exe", "dsquery.exe", "wmic.exe",
                       "gpresult.exe", "cmdkey.exe", "driverquery.exe"})

LSASS = "lsass.exe"
PROCESS_VM_READ = 0x0010  # the right a memory dump needs; 0x1000/0x1400 (query information) do not read memory


def base(path: str | None) -> str:
    """The file name of a Windows (or POSIX) path, lowercase."""
    return re.split(r"[\\/]", str(path or ""))[-1].strip().strip('"').lower()


# Public platforms whose addresses serve everyone (code hosting, CDNs, cloud storage): a payload fetched
# from one is blocked by URL, never by address.
SHARED_PLATFORMS = ("github.com", "githubusercontent.com", "gitlab.com", "bitbucket.org", "amazonaws.com",
                    "cloudfront.net", "googleapis.com", "googleusercontent.com", "blob.core.windows.net",
                    "azureedge.net", "akamaihd.net", "fastly.net", "dropboxusercontent.com", "onedrive.live.com",
                    "sharepoint.com", "discordapp.com", "cdn.discordapp.com")


def shared_platform(name: str | None) -> bool:
    n = str(name or "").lower().rstrip(".")
    return any(n == d or n.endswith("." + d) for d in SHARED_PLATFORMS)


def user_writable(path: str | None) -> bool:
    return bool(path) and bool(_USER_WRITABLE.search(str(path)))


def windows_binary(path: str | None) -> bool:
    """Shipped with Windows (its own directories), not a third party's or a user's."""
    return bool(path) and bool(_SYSTEM_DIRS.match(str(path)))


def installed_program(path: str | None) -> bool:
    return bool(path) and bool(_PROGRAM_DIRS.match(str(path)))


def offensive_tool(path: str | None) -> tuple[str, str] | None:
    """(what it is, technique) when the file name is a public offensive tool's."""
    name = base(path)
    for stem, what, tid in OFFENSIVE_TOOLS:
        if stem in name:
            return what, tid
    return None


def account(user: str | None) -> str:
    """`DOMAIN\\name` or `name@domain` -> name."""
    u = str(user or "").strip()
    if "\\" in u:
        u = u.rsplit("\\", 1)[1]
    if "@" in u:
        u = u.split("@", 1)[0]
    return u


def system_account(user: str | None) -> bool:
    u = account(user).lower()
    return not u or u in SYSTEM_ACCOUNTS or u.endswith("$")


def access_mask(value: str | int | None) -> int | None:
    try:
        return int(str(value), 16) if not isinstance(value, int) else value
    except (TypeError, ValueError):
        return None


def reads_memory(mask: str | int | None) -> bool:
    m = access_mask(mask)
    return m is not None and bool(m & PROCESS_VM_READ)


# --------------------------------------------------------------------------- behaviours


# Behaviours are the Linux analyst's (tag, weight, technique, what). Windows' tags: credential,
# firewall, firewall-revert, service, service-start, service-exec, persistence, evasion, log-clear,
# web-server, download, obfuscation, account, proxy-exec, remote-exec, wmi-exec, impact, tool,
# discovery, unusual-binary.


# (pattern over the command line, kind, weight, technique, description)
_COMMAND_RULES: tuple[tuple[str, str, int, str, str], ...] = (
    (r"comsvcs(?:\.dll)?[\s,]+#?(?:minidump|24)\b", "credential", 5, "T1003.001",
     "LSASS memory dumped through comsvcs.dll MiniDump"),
    (r"\bprocdump(?:64)?(?:\.exe)?\b.*(?:-ma|lsass)", "credential", 5, "T1003.001", "LSASS memory dumped with ProcDump"),
    (r"[-/]ma\s+lsass(?:\.exe)?\b", "credential", 5, "T1003.001", "a full memory dump of LSASS (ProcDump's -ma, renamed or not)"),
    (r"sekurlsa::|lsadump::|kerberos::|invoke-mimikatz", "credential", 5, "T1003.001", "Mimikatz credential commands"),
    (r"\besentutl(?:\.exe)?\b.*\b(?:sam|system|security|ntds(?:\.dit)?)\b", "credential", 5, "T1003.002",
     "a credential hive copied with esentutl"),
    (r"\breg(?:\.exe)?\"?\s+save\s+hklm\\(?:sam|system|security)\b", "credential", 5, "T1003.002",
     "a credential hive saved with reg save"),
    (r"\bntdsutil\b.*\bifm\b|\\ntds\.dit\b", "credential", 5, "T1003.003", "the AD database (ntds.dit) copied"),
    (r"\bvssadmin(?:\.exe)?\"?\s+create\s+shadow\b", "credential", 3, "T1003.002", "a shadow copy created"),
    (r"\bnetsh(?:\.exe)?\"?\s+(?:advfirewall\s+firewall|firewall)\s+(?:add|set)\b", "firewall", 4, "T1562.004",
     "a Windows Firewall rule added with netsh"),
    (r"\bnetsh(?:\.exe)?\"?\s+(?:advfirewall\s+firewall|firewall)\s+delete\b", "firewall-revert", 1, "T1562.004",
     "the firewall rule deleted again"),
    (r"\bnetsh(?:\.exe)?\"?\s+advfirewall\s+set\b.*\bstate\s+off\b", "firewall", 5, "T1562.004",
     "the Windows Firewall turned off"),
    (r"new-netfirewallrule\b", "firewall", 4, "T1562.004", "a Windows Firewall rule added with PowerShell"),
    (r"\bsc(?:\.exe)?\"?\s+(?:\\\\\S+\s+)?config\b.*\bbinpath\s*=", "service", 5, "T1543.003",
     "a service's binary path changed"),
    (r"\bsc(?:\.exe)?\"?\s+(?:\\\\\S+\s+)?create\b", "service", 4, "T1543.003", "a service created"),
    (r"\bsc(?:\.exe)?\"?\s+(?:\\\\\S+\s+)?start\b", "service-start", 2, "T1569.002", "a service started"),
    (r"userinitmprlogonscript", "persistence", 5, "T1037.001", "a logon script registered (UserInitMprLogonScript)"),
    (r"\\currentversion\\run(?:once)?\b", "persistence", 4, "T1547.001", "a Run key written"),
    (r"\\winlogon\\?\s*/v\s+(?:shell|userinit)\b", "persistence", 5, "T1547.004", "Winlogon helper changed"),
    (r"\bschtasks(?:\.exe)?\"?\s+/create\b", "persistence", 4, "T1053.005", "a scheduled task created"),
    (r"\b(?:wevtutil(?:\.exe)?\"?\s+cl|clear-eventlog)\b", "log-clear", 4, "T1070.001", "an event log cleared"),
    (r"\bauditpol(?:\.exe)?\"?\s+/(?:set\b.*:disable|clear\b|remove\b)", "evasion", 5, "T1562.002",
     "the audit policy weakened (auditpol)"),
    (r"\bwevtutil(?:\.exe)?\"?\s+(?:sl|set-log)\b.*(?:/e:false|/enabled:false|/lfn:|/logfilename:)", "evasion", 5,
     "T1562.002", "an event log disabled or redirected (wevtutil sl)"),
    (r"\\control\\minint\b", "evasion", 5, "T1562.002", "event logging stopped (the MiniNt key)"),
    (r"\blogman(?:\.exe)?\"?\s+(?:stop|delete)\b", "evasion", 3, "T1562.006", "an event trace session stopped"),
    (r"\b(?:set|add)-mppreference\b.*-(?:disable\w+|exclusion\w+)", "evasion", 4, "T1562.001",
     "Microsoft Defender weakened"),
    (r"\bvssadmin(?:\.exe)?\"?\s+delete\s+shadows\b|\bshadowcopy\s+delete\b|\bbcdedit\b.*recoveryenabled\s+no",
     "impact", 5, "T1490", "recovery inhibited (shadow copies deleted)"),
    (r"-m\s+(?:http\.server|simplehttpserver)\b", "web-server", 4, "T1105", "an ad-hoc web server started"),
    (r"\b(?:iex|invoke-expression)\b.*\b(?:downloadstring|webclient|invoke-webrequest|iwr)\b"
     r"|\b(?:downloadstring|downloadfile)\s*\(", "download", 4, "T1105", "a download cradle"),
    (r"\bcertutil(?:\.exe)?\b.*-urlcache\b|\bbitsadmin(?:\.exe)?\b.*\btransfer\b", "download", 4, "T1105",
     "a file downloaded with a Windows utility"),
    (r"\s-(?:e|en|enc|enco|encodedcommand)\s+[a-z0-9+/=]{16,}", "obfuscation", 3, "T1027",
     "an encoded PowerShell command"),
    (r"\bnet1?(?:\.exe)?\"?\s+user\b.*\s/add\b", "account", 4, "T1136.001", "a local account created"),
    (r"\bregsvr32(?:\.exe)?\b.*(?:/i:\s*\S*(?:https?:|\.sct)|scrobj\.dll)", "proxy-exec", 5, "T1218.010",
     "regsvr32 ran a remote or scriptlet COM object (Squiblydoo)"),
    (r"\bmshta(?:\.exe)?\b.*(?:https?:|javascript:|vbscript:)", "proxy-exec", 5, "T1218.005",
     "mshta ran a script or a remote HTML application"),
    (r"\bmavinject(?:32|64)?(?:\.exe)?\"?\s+\d+\s+/(?:injectrunning|hmodule=)", "proxy-exec", 5, "T1218.013",
     "a DLL injected into a running process with the signed mavinject.exe (process injection, T1055.001)"),
    (r"\bwmic(?:\.exe)?\b.*/node:\s*\S+.*\bprocess\s+call\s+create\b", "remote-exec", 5, "T1047",
     "a process started on another host through WMI"),
    (r"\bwmic(?:\.exe)?\b.*\bprocess\s+call\s+create\b", "wmi-exec", 3, "T1047", "a process started through WMI"),
    (r"\b(?:iex|invoke-expression)\b.*(?:frombase64string|\[text\.encoding\])", "obfuscation", 4, "T1027",
     "PowerShell running code it decodes at run time"),
    (r"\b(?:installutil|msbuild|cmstp)(?:\.exe)?\b.*(?:\\users\\|\\temp\\|\\programdata\\|/s\b)", "proxy-exec", 4,
     "T1218", "a signed Windows binary used to run the attacker's code"),
    (r"\bnet1?(?:\.exe)?\"?\s+localgroup\s+administrators\b.*\s/add\b", "account", 4, "T1098",
     "an account added to the administrators"),
)
_RULES = [(re.compile(p, re.IGNORECASE), k, w, t, d) for p, k, w, t, d in _COMMAND_RULES]

# Windows' own network diagnostics: `netsh trace stop` runs gatherNetworkInfo.vbs, which exports
# registry keys (the credential providers among them), event logs and gpresult. Alarming, and Windows'.
_DIAGNOSTICS = re.compile(r"\bnetsh(?:\.exe)?\"?\s+trace\b|gathernetworkinfo\.vbs", re.IGNORECASE)


def diagnostics(cmd: str | None) -> bool:
    return bool(cmd) and bool(_DIAGNOSTICS.search(str(cmd)))


def command_acts(cmd: str | None, image: str | None, parent_image: str | None = None) -> list[Behaviour]:
    """What one process start shows."""
    text = str(cmd or image or "")
    acts = [Behaviour(k, w, t, d) for rx, k, w, t, d in _RULES if rx.search(text)]
    name = base(image) or base(text.split(" ")[0])
    tool = offensive_tool(image)
    if tool:
        acts.append(Behaviour("tool", 5, tool[1], tool[0]))
    if name in DISCOVERY:
        acts.append(Behaviour("discovery", 1, _DISCOVERY_TECHNIQUE.get(name, "T1082"), f"discovery ({name})"))
    if user_writable(image) and name.endswith((".exe", ".scr", ".com")):
        acts.append(Behaviour("unusual-binary", 3, "T1204.002", "a program run from a user-writable folder"))
    pname = base(parent_image)
    if pname == "services.exe" and name in {"rundll32.exe", "cmd.exe", "powershell.exe"} and (
            user_writable(text) or "\\\\.\\pipe\\" in text.lower() or name == "powershell.exe"):
        acts.append(Behaviour("service-exec", 5, "T1543.003", f"the service manager ran {name} with an attacker's argument"))
    if name == "rundll32.exe" and any(user_writable(d) for d in _DLL_ARG.findall(text)) and pname != "services.exe":
        acts.append(Behaviour("proxy-exec", 4, "T1218.011", "rundll32 ran a DLL from a user-writable folder"))
    return acts


_DLL_ARG = re.compile(r"[^\s\",]+\.dll", re.IGNORECASE)
_DISCOVERY_TECHNIQUE = {"whoami.exe": "T1033", "quser.exe": "T1033", "qwinsta.exe": "T1033", "systeminfo.exe": "T1082",
                        "tasklist.exe": "T1057", "ipconfig.exe": "T1016", "netstat.exe": "T1049", "arp.exe": "T1016",
                        "route.exe": "T1016", "net.exe": "T1087", "net1.exe": "T1087", "nltest.exe": "T1482",
                        "klist.exe": "T1558", "nslookup.exe": "T1018", "gpresult.exe": "T1615",
                        "cmdkey.exe": "T1555", "driverquery.exe": "T1082"}


# Registry writes that matter (path substring, lowercase) -> (kind, weight, technique, what).
_REGISTRY_RULES: tuple[tuple[str, str, int, str, str], ...] = (
    ("userinitmprlogonscript", "persistence", 5, "T1037.001", "a logon script registered (UserInitMprLogonScript)"),
    ("\\currentversion\\run", "persistence", 4, "T1547.001", "a Run key written"),
    ("\\winlogon\\shell", "persistence", 5, "T1547.004", "the Winlogon shell changed"),
    ("\\winlogon\\userinit", "persistence", 5, "T1547.004", "Winlogon userinit changed"),
    ("\\image file execution options\\", "persistence", 4, "T1546.012", "an Image File Execution Options debugger"),
    ("firewallpolicy\\firewallrules", "firewall", 3, "T1562.004", "a firewall rule stored (FirewallRules)"),
    ("\\imagepath", "service", 4, "T1543.003", "a service's ImagePath written"),
)


def registry_act(path: str | None) -> Behaviour | None:
    p = str(path or "").lower()
    for stem, kind, weight, tid, what in _REGISTRY_RULES:
        if stem in p:
            return Behaviour(kind, weight, tid, what)
    return None


# --------------------------------------------------------------------------- decoding


_ENC = re.compile(r"\s-(?:e|en|enc|enco|encodedcommand)\s+([A-Za-z0-9+/=]{16,})", re.IGNORECASE)


def decode_powershell(cmd: str | None) -> str | None:
    """The text of `powershell -enc <base64 of UTF-16LE>`, when it decodes."""
    m = _ENC.search(str(cmd or ""))
    if not m:
        return None
    try:
        raw = base64.b64decode(m.group(1) + "=" * (-len(m.group(1)) % 4), validate=False)
        text = raw.decode("utf-16-le")
    except (ValueError, UnicodeDecodeError):
        return None
    return text if text.isprintable() else None


_PS_FUNCTION = re.compile(r"\bfunction\s+([A-Za-z]+-[A-Za-z][\w]*)", re.IGNORECASE)
_PS_TRADECRAFT = re.compile(
    r"minidumpwritedump|sekurlsa|invoke-mimikatz|lsass|downloadstring|reflection\.assembly|virtualalloc"
    r"|amsiutils|frombase64string", re.IGNORECASE)


def script_functions(text: str | None) -> list[str]:
    """Functions a PowerShell script block defines (what a tool calls itself: `function Out-Minidump`)."""
    return list(dict.fromkeys(_PS_FUNCTION.findall(str(text or ""))))


def script_tradecraft(text: str | None) -> list[str]:
    return sorted({m.group(0) for m in _PS_TRADECRAFT.finditer(str(text or ""))}, key=str.lower)


# --------------------------------------------------------------------------- Windows event codes

LOG_CLEARED = ("104", "1102")  # System log cleared / Security log cleared
SERVICE_INSTALLED = ("7045", "4697")
SERVICE_ERRORS = ("7000", "7009", "7011", "7031", "7034")
NETWORK_LOGON_TYPES = ("3",)
REMOTE_INTERACTIVE_LOGON_TYPES = ("10",)
# Named pipes remote administration goes through (5145 RelativeTargetName).
ADMIN_PIPES = frozenset({"svcctl", "atsvc", "winreg", "samr", "lsarpc", "drsuapi", "psexesvc", "srvsvc"})
# Where remote execution surfaces on the target: WMI's provider host, the service manager, WinRM's host.
REMOTE_EXEC_PARENTS = frozenset({"wmiprvse.exe", "services.exe", "wsmprovhost.exe"})
# Processes that exist only to host a session opened from another machine (PowerShell remoting over WinRM):
# their start is remote execution whatever they then run.
REMOTE_SESSION_HOSTS = frozenset({"wsmprovhost.exe"})
EXEC_PIPES = frozenset({"svcctl", "atsvc", "psexesvc", "remcom_communicaton", "paexec"})
LATERAL_PORTS = {135: "RPC", 139: "NetBIOS", 445: "SMB", 3389: "RDP", 5985: "WinRM", 5986: "WinRM"}
# Services the estate's core hosts provide (zeek ports): never block an address that serves them.
CORE_SERVICE_PORTS = frozenset({53, 88, 389, 636, 3268, 3269, 464})


def host_address(ip: str | None) -> bool:
    """An address a host can own: not loopback, link-local, multicast or unspecified."""
    import ipaddress

    try:
        a = ipaddress.ip_address(str(ip))
    except ValueError:
        return False
    return not (a.is_loopback or a.is_link_local or a.is_multicast or a.is_unspecified or a.version == 6)


def listed(value: object) -> list[str]:
    """A field value as a list of strings (ES|QL gives multi-valued fields as lists)."""
    return [str(v) for v in as_list(value) if v is not None]
