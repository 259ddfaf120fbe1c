"""The sections of what the cluster reaches outside AWS: `proxy` (the way out) and `rancher` (registration)
(settings/sections.py composes them into ClusterKeys)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr, Strict
from pydantic.json_schema import WithJsonSchema

from .fields import (
    DEFAULT_RANCHER_UPGRADES,
    MAX_NO_PROXY_CHARS,
    MAX_NO_PROXY_ITEMS,
    NO_PROXY_ITEM_PATTERN,
    PROXY_URL_PATTERN,
    RANCHER_CLUSTER_NAME_PATTERN,
    RANCHER_URL_PATTERN,
    RANCHER_URL_WHAT,
    Msg,
    NonEmpty,
    OrUnset,
    no_proxy_why,
    proxy_credentials,
    proxy_url_why,
    rancher_cluster_name_why,
    rancher_url_hidden,
    rancher_url_why,
)
from .section import Section


class Proxy(Section):
    """proxy: the HTTP(S) proxy nodes, RKE2 or Docker, the CCM and the EBS CSI controller go out through."""

    http_proxy: OrUnset[Annotated[str, NonEmpty(PROXY_URL_PATTERN, max_length=300), Msg(
        what="a proxy URL like http://proxy.example.com:3128 (http or https, a host, a port; no credentials)",
        default="httpsProxy", type_name="URL", why=proxy_url_why, hide=proxy_credentials)]] = Field(
        None, description="HTTP_PROXY for plain-http requests (apt mirrors); defaults to httpsProxy.")
    https_proxy: OrUnset[Annotated[str, NonEmpty(PROXY_URL_PATTERN, max_length=300), Msg(
        what="a proxy URL like http://proxy.example.com:3128 (http or https, a host, a port; no credentials)",
        default="httpProxy", type_name="URL", why=proxy_url_why, hide=proxy_credentials)]] = Field(
        None, description="HTTPS_PROXY for https requests (SSM, AWS APIs, RKE2 and image downloads); defaults to httpProxy.")
    no_proxy: Annotated[tuple[Annotated[str, NonEmpty(NO_PROXY_ITEM_PATTERN, max_length=254)], ...], Msg(
        what="NO_PROXY entries: host names, .domain suffixes, IPv4 addresses or canonical CIDRs", type_name="list",
        default="`[]`", why=no_proxy_why),
        WithJsonSchema({"type": "array", "items": {"type": "string", "maxLength": 254, "pattern": NO_PROXY_ITEM_PATTERN},
                        "uniqueItems": True, "maxItems": MAX_NO_PROXY_ITEMS})] = Field(
        (), description=f"What else bypasses the proxy (VPC endpoints' names, internal registries); at most "
                        f"{MAX_NO_PROXY_ITEMS}, {MAX_NO_PROXY_CHARS} characters together. The VPC, pod and service "
                        "networks, .svc, .cluster.local, .internal, IMDS, localhost and the endpoint are always added.")


class Rancher(Section):
    """rancher: register the cluster in Rancher as an imported cluster (the rancher2 provider)."""

    url: OrUnset[Annotated[str, NonEmpty(RANCHER_URL_PATTERN, max_length=2048), Msg(
        what=RANCHER_URL_WHAT,
        missing="missing; set Rancher's https address", type_name="URL", why=rancher_url_why, hide=rancher_url_hidden)]] = Field(
        None, description="Rancher's address (https; a certificate every client trusts: a public CA).")
    token: OrUnset[Annotated[SecretStr, Strict(), Msg(type="is not text; the token is a string like token-xxxxx:yyyy, set "
                                                        "with `pulumi config set --secret --path rancher.token <token>`",
                                                   missing="missing; set it with `pulumi config set --secret --path rancher.token <token>`",
                                                   type_name="encrypted string", default="required")]] = Field(
        None, description="Rancher API token (token-xxxxx:yyyy) of a user who may create clusters; a `secure:` value only.")
    cluster_name: OrUnset[Annotated[str, NonEmpty(RANCHER_CLUSTER_NAME_PATTERN), Msg(
        what="a lowercase DNS label: 1-63 chars of a-z, 0-9 and -, starting and ending with a letter or digit, not local",
        default="`clusterId`", type_name="string", why=rancher_cluster_name_why)]] = Field(
        None, description="The cluster's name in Rancher (renamed in place).")
    upgrades: Annotated[Literal["rke-aws", "rancher"], Msg(kind="an upgrade owner", allowed="rke-aws or rancher",
                                                           reason="kubernetesVersion stays the one place a version is set")] = Field(
        DEFAULT_RANCHER_UPGRADES, description="Who upgrades RKE2: rke-aws (its own Plans; Rancher's version management off, Rancher >= 2.11) or rancher (Rancher's own SUC and Plans; this program writes none).")

    @property
    def rancher_upgrades(self) -> bool:
        return self.upgrades == "rancher"
