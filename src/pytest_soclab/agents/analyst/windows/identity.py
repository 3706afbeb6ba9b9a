"""The identity plane: AD FS and Active Directory reads that give away the token-signing key, and what
was done in the tenant afterwards (Azure AD audit, Office 365 audit, Microsoft 365 Defender events).

What an analyst knows:
- the AD FS token-signing certificate is stored encrypted in the AD FS configuration database
  (`ServiceSettings` in the Windows Internal Database); its key (DKM) sits in the `thumbnailPhoto`
  attribute of a contact under `CN=ADFS,CN=Microsoft,CN=Program Data` in AD. Reading both is
  stealing the key that signs every SAML token: anyone holding it forges tokens for any user
  (Golden SAML, T1606.002), so cloud actions in users' names afterwards may be forged;
- in the tenant, a delegated permission grant to an application, a secret added to it, and that
  application reading mail is a backdoored application collecting mail (T1098.001, T1114.002);
- Azure AD Connect's sync account (`MSOL_<hex>`) logs on to domain controllers all day.
Events are read by their ECS `event.action`; the vendor fields are scanned for the values that matter
(scopes, application names, addresses), not addressed by name, since exports name them differently.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.tradecraft import is_internal, is_ip
from pytest_soclab.agents.analyst.windows import tradecraft as tc
from pytest_soclab.agents.analyst.windows.evidence import Finding, ref_of
from pytest_soclab.agents.analyst.windows.streams import APPLICATION_STREAMS, CLOUD_STREAMS, SECURITY, SYSMON

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.windows.analyst import WindowsAnalyst

DKM_CONTAINER = "cn=adfs,cn=microsoft,cn=program data"
THUMBNAIL_PHOTO_GUID = "8d3bca50-1d7e-11d0-a081-00aa006c33ed"  # the thumbnailPhoto attribute's schema id
WINDOW_S = 4 * 3600
_SCOPE = re.compile(r"\b(?:Mail|Files|Sites|Directory|User|Application|RoleManagement|Calendars|Contacts)"
                    r"\.[A-Za-z]+(?:\.[A-Za-z]+)*\b")
_GUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)
_SYNC_ACCOUNT = re.compile(r"^MSOL_[0-9a-f]{8,}$", re.IGNORECASE)

GRANT = ("add delegated permission grant", "consent to application", "add app role assignment")
SECRET = ("certificates and secrets", "add service principal credentials", "update application")
MAIL = ("mailitemsaccessed",)


def has_identity_data(a: WindowsAnalyst) -> bool:
    return any(a.tel.has(s) for s, _ in CLOUD_STREAMS)


def investigate_identity(a: WindowsAnalyst) -> None:
    """The key theft on premises, then the tenant's changes and the mail they led to."""
    t = a.pivot_time or a.window[0]
    if not t:
        return
    span = f'@timestamp >= "{clock.shift(t, -WINDOW_S)}" AND @timestamp <= "{clock.shift(t, WINDOW_S)}"'
    key_theft(a, span)
    for stream, vendor in CLOUD_STREAMS:
        if not a.tel.has(stream):
            continue
        rows = a.esql(f"FROM {stream} METADATA _id, _index | WHERE {span} | SORT @timestamp | KEEP _id, _index, "
                      f"@timestamp, event.action, host.name, source.ip, user.name, {vendor} | LIMIT 300")
        for r in rows:
            cloud_event(a, r)
    sync_accounts(a, span)


def key_theft(a: WindowsAnalyst, span: str) -> None:
    # The AD FS configuration read from its database (SQL audit 33205, or a pipe into the WID).
    for stream in APPLICATION_STREAMS:
        if not a.tel.has(stream):
            continue
        for r in a.esql(f'FROM {stream} METADATA _id, _index | WHERE event.code == "33205" AND message LIKE '
                        f'"*ServiceSettings*" AND {span} | KEEP _id, _index, @timestamp, host.name, message, '
                        "winlog.event_data.server_principal_name | LIMIT 5")[:1]:
            who = tc.account(r.get("winlog.event_data.server_principal_name"))
            actor(a, who)
            a.case.add(Finding(str(r.get("@timestamp")), str(r.get("host.name")),
                               f"{who} read the AD FS configuration (ServiceSettings, the encrypted token-signing "
                               f"certificate) from the Windows Internal Database on {r.get('host.name')} (SQL audit 33205).",
                               "T1552.004", ref_of(r), 5))
    for r in a.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "18" AND winlog.event_data.PipeName LIKE '
                    f'"*WID*" AND {span} | KEEP _id, _index, @timestamp, host.name, process.name, '
                    "winlog.event_data.PipeName | LIMIT 5")[:1]:
        if tc.base(r.get("process.name")) in tc.SHELLS:
            a.case.add(Finding(str(r.get("@timestamp")), str(r.get("host.name")),
                               f"{r.get('process.name')} connected to the {r.get('winlog.event_data.PipeName')} pipe on "
                               f"{r.get('host.name')}: a shell querying the AD FS database directly (Sysmon 18).",
                               "T1552.004", ref_of(r), 4))
    # The DKM key read in AD: object access (4662) to the thumbnailPhoto attribute.
    rows = a.esql(f'FROM {SECURITY} METADATA _id, _index | WHERE event.code == "4662" AND winlog.event_data.Properties LIKE '
                  f'"*{THUMBNAIL_PHOTO_GUID}*" AND {span} | SORT @timestamp | KEEP _id, _index, @timestamp, host.name, '
                  "user.name, winlog.event_data.ObjectName, winlog.event_data.Properties | LIMIT 10")
    if rows:
        r = rows[0]
        who = tc.account(r.get("user.name"))
        actor(a, who)
        a.case.add(Finding(str(r.get("@timestamp")), str(r.get("host.name")),
                           f"{r.get('host.name')} logged {len(rows)} directory object reads (4662) by {who} of the "
                           f"thumbnailPhoto attribute ({THUMBNAIL_PHOTO_GUID}): the AD FS DKM key.", "T1552.004", ref_of(r), 5))


def cloud_event(a: WindowsAnalyst, r: dict[str, Any]) -> None:
    action = str(r.get("event.action") or "").strip().rstrip(".").lower()
    values = [v for k, v in r.items() if v is not None and k not in ("_id", "_index")]
    text = " ".join(str(v) for v in values)
    host = str(r.get("host.name") or "")
    if action == "ldapsearch" and DKM_CONTAINER in text.lower() and "thumbnailphoto" in text.lower():
        who = next((tc.account(v) for k, v in r.items() if k.lower().endswith("initiatingprocessaccountname") and v), "")
        actor(a, who)
        a.case.add(Finding(str(r.get("@timestamp")), host,
                           f"{who or 'an account'} on {host} searched LDAP for the thumbnailphoto of the contact under "
                           "CN=ADFS,CN=Microsoft,CN=Program Data: the AD FS DKM key that decrypts the token-signing "
                           "certificate (LdapSearch).", "T1552.004", ref_of(r), 5))
        a.case.techniques.setdefault("T1606.002", "the AD FS token-signing key taken: SAML tokens can be forged")
        return
    app = _app_name(r)
    user = next((str(v) for k, v in r.items() if k.lower().endswith(("initiatinguser", "initiatinguserorapp", "userid"))
                 and v and "@" in str(v)), "")
    if any(action.startswith(g) for g in GRANT):
        scopes = sorted(set(_SCOPE.findall(text)))
        a.case.add(Finding(str(r.get("@timestamp")), host,
                           f"{user or 'a user'} made an {r.get('event.action')!s} in the tenant"
                           + (f" for {app}" if app else "") + (f" ({' '.join(scopes)})" if scopes else "")
                           + ": an application given access to users' data.", "T1098.003", ref_of(r), 4))
        cloud_actor(a, user)
    elif any(s in action for s in SECRET):
        secret = "certificates and secrets" in action or "credential" in action
        a.case.add(Finding(str(r.get("@timestamp")), host,
                           f"{user or 'a user'}: {str(r.get('event.action')).strip()}" + (f" on {app}" if app else "")
                           + (": a new secret lets whoever holds it sign in as the application." if secret else "."),
                           "T1098.001", ref_of(r), 4 if secret else 2))
        cloud_actor(a, user)
    elif action in MAIL:
        ips = sorted({str(v) for k, v in r.items() if v and "ip" in k.lower().rsplit(".", 1)[-1] and is_ip(str(v))})
        client = next((str(v) for k, v in r.items() if v and k.lower().endswith(("clientappid", "oauthappid"))), "")
        a.case.add(Finding(str(r.get("@timestamp")), host,
                           "MailItemsAccessed" + (f" by {app}" if app else "") + (f" (client id {client})" if client else "")
                           + (f" from {', '.join(ips)}" if ips else "") + (f" on {user}'s mailbox" if user else "")
                           + ": mail collection through the application.", "T1114.002", ref_of(r), 5))
        for ip in ips:
            if not is_internal(ip) and ip not in a.identity_ips:
                a.identity_ips.append(ip)


def sync_accounts(a: WindowsAnalyst, span: str) -> None:
    rows = a.esql(f'FROM {SECURITY} | WHERE event.code == "4624" AND {span} | STATS n = COUNT(*) BY user.name, host.name '
                  "| LIMIT 50")
    for r in rows:
        user = str(r.get("user.name") or "")
        if _SYNC_ACCOUNT.match(user):
            a.case.told_apart.append(f"{user}'s {r.get('n')} logons on {r.get('host.name')}: Azure AD Connect's sync "
                                     "account at its routine work, not the attack.")


def actor(a: WindowsAnalyst, who: str) -> None:
    if who and not tc.system_account(who) and who not in a.case.actors:
        a.case.actors.append(who)


def cloud_actor(a: WindowsAnalyst, upn: str) -> None:
    if upn and upn not in a.cloud_users:
        a.cloud_users.append(upn)


def _app_name(r: dict[str, Any]) -> str:
    """The application an event is about: a display name next to an application key, not an id."""
    for k, v in r.items():
        low = k.lower()
        if v and ("modifiedapplication" in low or low.endswith(("appdisplayname", "accountdisplayname"))):
            s = str(v)
            if not _GUID.match(s) and not s.startswith(("{", "[")) and len(s) <= 80:
                return s
    return ""
