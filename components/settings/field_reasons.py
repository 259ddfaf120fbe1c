"""Why a pattern refused a value (the verdict is the pattern's; these only name the rule it breaks), and the
values never shown because they may carry a credential. Part of the vocabulary settings/fields.py gathers."""

from __future__ import annotations

import re

from .field_patterns import (
    RANCHER_LOCAL_CLUSTER,
    RANCHER_URL_RE,
    RANCHER_URL_WHAT,
    S3_RESERVED_PREFIXES,
    S3_RESERVED_SUFFIXES,
)
from .field_types import shown

# ---- why a pattern refused a value (the verdict is the pattern's; these only name the rule) ------

def bucket_why(v: str) -> str | None:
    if not 3 <= len(v) <= 63:
        return f"has {len(v)} characters (3 to 63)"
    if not re.fullmatch(r"[a-z0-9.-]+", v):
        return "has characters other than lowercase letters, digits, dots and hyphens"
    if not (v[0].isalnum() and v[-1].isalnum()):
        return "does not start and end with a letter or digit"
    for bad in ("..", ".-", "-."):
        if bad in v:
            return f"contains '{bad}' (each dot-separated label starts and ends with a letter or digit)"
    if re.fullmatch(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}", v):
        return "is formatted as an IP address"
    for pre in S3_RESERVED_PREFIXES:
        if v.startswith(pre):
            return f"starts with '{pre}', a prefix S3 reserves"
    for suf in S3_RESERVED_SUFFIXES:
        if v.endswith(suf):
            return f"ends with '{suf}', a suffix S3 reserves"
    return None


def folder_why(v: str) -> str | None:
    segments = v.split("/")
    if any(s == "" for s in segments):
        return "has an empty segment (a leading, trailing or double /)"
    if any(s in (".", "..") for s in segments):
        return "has a '.' or '..' segment (k3s cleans the path, the node role's grant does not)"
    return None


def cluster_id_why(v: str) -> str | None:
    return "starts with 'sg-', which AWS refuses as the start of a security group name" if v.startswith("sg-") else None


def image_why(v: str) -> str | None:
    if re.search(r":latest\Z", v):
        return "is pinned to 'latest', which moves (a CCM must not become newer than the cluster)"
    return None


def kms_why(v: str) -> str | None:
    m = re.fullmatch(r"arn:([a-z-]+):kms:([a-z0-9-]+):.*", v)
    if m and m.group(1) in ("aws", "aws-us-gov", "aws-cn"):
        region = m.group(2)
        want = "aws-us-gov" if region.startswith("us-gov-") else "aws-cn" if region.startswith("cn-") else "aws"
        if want != m.group(1):
            return f"names partition {m.group(1)}, but {region} is in {want}"
    return None


def _url_start(v: str, pattern: str, missing: str) -> tuple[str | None, re.Match[str] | None]:
    """What every URL key checks first: printable ASCII without spaces, then `scheme://` as `pattern` splits it.
    (why refused, None) or (None, the match)."""
    if not re.fullmatch(r"[!-~]*", v):
        return "has a space, a control or a non-ASCII character", None
    m = re.fullmatch(pattern, v)
    return (None, m) if m else (missing, None)


def proxy_url_why(v: str) -> str | None:
    why, m = _url_start(v, r"([A-Za-z][A-Za-z0-9+.-]*)://(.*)", "has no scheme:// (write http://host:port)")
    if m is None:
        return why
    if m.group(1) not in ("http", "https"):
        return f"has scheme {m.group(1)}; the proxy variables take http or https"
    port = re.fullmatch(r"[^/]*:([0-9]+)/?", m.group(2))
    if not port:
        return "has no :port, or something after the port (a path, query or fragment)"
    if not 1 <= int(port.group(1)) <= 65535:
        return f"has port {port.group(1)} (1 to 65535)"
    return None


def no_proxy_why(v: str) -> str | None:
    if v == "*":
        return "would send nothing through the proxy"
    if v.startswith("*."):
        return "is a wildcard only Go reads; write the domain with a leading dot (.example.com)"
    if re.fullmatch(r"[^/]+:[0-9]+", v):
        return "has a port, which only Go reads"
    if re.fullmatch(r"[0-9.]+/[0-9]+", v):
        return "is not a canonical IPv4 CIDR"
    return None


def rancher_url_why(v: str) -> str | None:
    """Which rule a refused rancher.url breaks (config.py has already refused, unseen, one with @, ? or #)."""
    why, m = _url_start(v, r"([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)(.*)",
                        "has no https:// (write https://rancher.example.com)")
    if m is None:
        return why
    if m.group(1).lower() != "https":
        return "is not https (the API token would cross the network in clear text)"
    if m.group(1) != "https":
        return "has its scheme in capitals (write https://)"
    host, _, port = m.group(2).partition(":")
    path = m.group(3)
    if path not in ("", "/"):
        return (f"has a path ({path}), which the rancher2 provider drops: it calls <host>/v3 whatever follows the "
                "host (terraform-provider-rancher2 rancher2/util.go NormalizeURL); Rancher answers at its host's root")
    if ":" in m.group(2) and not re.fullmatch(r"[1-9][0-9]{0,4}", port):
        return f"has port '{port}' (write 1 to 65535, or leave the port out for 443)"
    if port and int(port) > 65535:
        return f"has port {port} (1 to 65535)"
    labels = host.split(".")
    if not re.fullmatch(r"[A-Za-z0-9.-]*", host):
        return "has a host name with characters other than letters, digits, '.' and '-'"
    if len(host) > 253:
        return f"has a host name of {len(host)} characters (at most 253)"
    if any(not label for label in labels):
        return "has an empty DNS label (two dots in a row, or a dot at either end)"
    bad = next((label for label in labels if len(label) > 63), None)
    if bad:
        return f"has a DNS label of {len(bad)} characters (at most 63)"
    bad = next((label for label in labels if label.startswith("-") or label.endswith("-")), None)
    if bad:
        return f"has a DNS label that starts or ends with '-' ({bad})"
    return None


def rancher_cluster_name_why(v: str) -> str | None:
    if v == RANCHER_LOCAL_CLUSTER:
        return ("is the name every Rancher gives the cluster it runs in, and Rancher refuses a second cluster of a "
                "name it has")
    return None


# ---- values that may carry a credential: refused without ever being shown --------------------------

PROXY_CREDENTIALS = (
    "holds credentials (user:password@): the proxy URL is written into every node's EC2 user data, which "
    "anyone allowed ec2:DescribeInstanceAttribute reads in plain text, so this program does not take them; "
    "let the proxy authorise the cluster by source address (the VPC CIDR or the node security group)")
RANCHER_URL_HIDDEN = (
    "holds user info (user:password@), a query or a fragment, not shown here as it may carry a credential; write "
    "Rancher's address alone, like https://rancher.example.com: the API token (rancher.token) authenticates")


def proxy_credentials(v: str) -> tuple[str, str] | None:
    return ("proxy.credentials", PROXY_CREDENTIALS) if "@" in v else None


def rancher_url_hidden(v: str) -> tuple[str, str] | None:
    return ("rancher.url-hidden", RANCHER_URL_HIDDEN) if any(c in v for c in "@?#") else None


def rancher_url_problem(url: str) -> str | None:
    """Why `url` may not be rancher.url, without ever showing it when it could carry a credential
    (user info, a query or a fragment); None when it is accepted. The message follows the key name."""
    if rancher_url_hidden(url):
        return RANCHER_URL_HIDDEN
    if RANCHER_URL_RE.fullmatch(url):
        return None
    reason = rancher_url_why(url)
    return f"{shown(url)} {reason or 'is not valid'}; expected {RANCHER_URL_WHAT}"
