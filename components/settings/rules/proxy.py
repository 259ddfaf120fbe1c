"""proxy: a URL at least, no entry of noProxy twice, within the size the user data can carry; Session Manager's
limit with an https proxy."""

from __future__ import annotations

from ...diagnostics import Diagnostic
from ..fields import MAX_NO_PROXY_CHARS, MAX_NO_PROXY_ITEMS
from .base import Context, Keys, error, warning


def check(keys: Keys, ctx: Context) -> list[Diagnostic]:
    px = keys.valid.proxy
    raw = keys.section("proxy")
    found: list[Diagnostic] = []  # a URL with credentials: refused, unseen, by the model (fields.proxy_credentials)
    if px is None or (raw is not None and not isinstance(raw, dict)):
        return found  # not set, or not a map (the model said so)
    seen: dict[str, int] = {}
    for i, entry in enumerate(px.no_proxy):
        if entry.lower() in seen:
            found.append(error(f"proxy.noProxy[{i}]", f"'{entry}' is already listed as proxy.noProxy["
                                                      f"{seen[entry.lower()]}]; list each entry once",
                               "proxy.entry-twice", entry))
        seen.setdefault(entry.lower(), i)
    if len(px.no_proxy) > MAX_NO_PROXY_ITEMS:
        found.append(error("proxy.noProxy", f"lists {len(px.no_proxy)} entries; at most {MAX_NO_PROXY_ITEMS} (a .domain "
                                            "suffix covers every name under it)", "proxy.too-many"))
    joined = ",".join(px.no_proxy)
    if len(joined) > MAX_NO_PROXY_CHARS:
        found.append(error("proxy.noProxy", f"is {len(joined)} characters joined; at most {MAX_NO_PROXY_CHARS} (it is "
                                            "written into every node's user data, which EC2 limits to 16 KiB)",
                           "proxy.too-long"))
    url = px.https_proxy or px.http_proxy
    written = raw if isinstance(raw, dict) else px.model_dump(by_alias=True, exclude_unset=True)
    if url is None:
        if not any(k in written for k in ("httpProxy", "httpsProxy")):
            found.append(error("proxy", "sets no httpProxy or httpsProxy; give the proxy's URL, like "
                                        "{httpsProxy: http://proxy.example.com:3128}, or remove the proxy section",
                               "proxy.no-url"))
        return found
    if keys.valid.access.ssm and any(u.startswith("https://") for u in (px.http_proxy or url, url)):
        # AWS Systems Manager User Guide, "Configure SSM Agent to use a proxy on Linux nodes".
        found.append(warning("proxy", "an https:// proxy, which Session Manager does not support (AWS Systems Manager "
                                      "User Guide, \"Configure SSM Agent to use a proxy\"): access.ssm sessions may "
                                      "fail; the boot, RKE2 and the CCM are not affected", "proxy.https-ssm"))
    return found
