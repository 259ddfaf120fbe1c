"""What makes each distribution use the external AWS cloud provider: cloud-init user data, RKE1's
cluster.yml and RKE2's /etc/rancher/rke2/config.yaml. Pure functions of the node plan.

Both distributions ignore configuration keys they do not know (RKE1 silently, RKE2 with a
warning), so every key written here is checked against the lists below by the tests.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from ..plan.cluster_documents import dump_yaml
from ..plan.names import KUBE_API_PORT, RKE2_SUPERVISOR_PORT
from ..plan.nodes import NodePlan
from ..plan.snapshots import EtcdS3, etcd_s3_keys
from ..settings import versions
from ..settings.versions import rke2_patch_at_least

# Keys rancher/rke's cluster.yml parser reads (RancherKubernetesEngineConfig); others are dropped silently.
RKE_CLUSTER_KEYS = frozenset({
    "nodes", "services", "network", "authentication", "addons", "addons_include", "system_images",
    "ssh_key_path", "ssh_cert_path", "ssh_agent_auth", "authorization", "ignore_docker_version",
    "enable_cri_dockerd", "kubernetes_version", "private_registries", "ingress", "cluster_name",
    "cloud_provider", "prefix_path", "win_prefix_path", "addon_job_timeout", "bastion_host",
    "monitoring", "restore", "rotate_certificates", "dns", "upgrade_strategy", "rotate_encryption_key",
})
RKE_NODE_KEYS = frozenset({
    "address", "port", "internal_address", "role", "hostname_override", "user", "docker_socket",
    "ssh_key", "ssh_key_path", "ssh_cert", "ssh_cert_path", "ssh_agent_auth", "labels", "taints",
})
RKE_CLOUD_PROVIDER_KEYS = frozenset({"name", "useInstanceMetadataHostname"})
RKE_EXTERNAL_PROVIDER = "external-aws"  # RKE >= v1.5.0 / v1.4.15: --cloud-provider=external
RKE_IN_TREE_PROVIDER = "aws"  # refused by RKE for Kubernetes >= 1.27

RKE2_COMMON_KEYS = frozenset({
    "token", "token-file", "server", "node-name", "node-label", "node-taint", "node-ip", "cloud-provider-name",
    "kubelet-arg", "kube-proxy-arg", "profile", "selinux", "protect-kernel-defaults",
    # valid on agents too, but only servers read them
    "audit-policy-file", "pod-security-admission-config-file",
})
# rancher/rke2 pkg/cli/cmds/server.go (k3s server flags): server-only.
RKE2_SERVER_ONLY_KEYS = frozenset({
    "tls-san", "kube-apiserver-arg", "kube-controller-manager-arg", "disable-cloud-controller", "cni",
    "write-kubeconfig-mode", "agent-token", "agent-token-file",
    "etcd-s3", "etcd-s3-bucket", "etcd-s3-region", "etcd-s3-folder", "etcd-s3-endpoint",
    "etcd-snapshot-schedule-cron", "etcd-snapshot-retention", "etcd-s3-retention",
})
RKE2_SERVER_KEYS = RKE2_COMMON_KEYS | RKE2_SERVER_ONLY_KEYS
RKE2_AGENT_KEYS = RKE2_COMMON_KEYS
RKE2_CONFIG_PATH = "/etc/rancher/rke2/config.yaml"
RKE2_TOKEN_PATH = "/etc/rancher/rke2/join-token"
RKE2_AGENT_TOKEN_PATH = "/etc/rancher/rke2/agent-token"
RKE2_MANIFESTS_DIR = "/var/lib/rancher/rke2/server/manifests"
BOOTSTRAP_PATH = "/usr/local/sbin/rke-aws-bootstrap"
SYNC_PATH = "/usr/local/sbin/rke-aws-sync-manifests"
# Files the manifest sync owns in RKE2's manifests directory.
MANIFEST_PREFIX = "rke-aws-"
SYNC_INTERVAL = "2min"  # how soon a changed manifest (CCM values, upgrade Plans) reaches the servers

# Every network step at boot is retried for this long: instances no longer wait for their NAT
# gateway (about 105 s to create), the instance role's credentials appear a few seconds after
# boot, and a mirror can be briefly unreachable. 15 minutes, well over the 10 the issue sets.
RETRY_SECONDS = 900
RETRY_DELAY = 10
# Kernel settings RKE1 nodes need for pod networking through bridges.
RKE_SYSCTLS = {
    "net.bridge.bridge-nf-call-iptables": "1",
    "net.bridge.bridge-nf-call-ip6tables": "1",
    "net.ipv4.ip_forward": "1",
}
RKE_KERNEL_MODULES = ("br_netfilter", "overlay")


def _hostname(node: NodePlan) -> dict[str, Any]:
    # The OS hostname is the full private DNS name: kubelet defaults its node name to it.
    return {
        "preserve_hostname": False,
        "hostname": node.name.split(".")[0],
        "fqdn": node.name,
        "prefer_fqdn_over_hostname": True,
    }


def _cloud_config(doc: Mapping[str, Any]) -> str:
    return "#cloud-config\n" + dump_yaml(dict(doc), width=1000)



def _quote(value: Any) -> str:
    """Always single-quoted (shlex.quote leaves safe-looking words bare, which shellcheck reads as
    arithmetic or commands): nothing in a value is ever expanded by the shell."""
    return "'" + str(value).replace("'", "'\\''") + "'"


def _assignments(settings: Mapping[str, Any]) -> str:
    return "".join(f"{k}={_quote(v)}\n" for k, v in settings.items())


# Shell the boot scripts share: logging, a retry loop with a time budget, downloads ...
_RETRY_SH = r"""
log() { printf 'rke-aws: %s\n' "$*" >&2; }

# retry CMD...: run CMD until it succeeds or RETRY_SECONDS have passed.
retry() {
  deadline=$(( $(date +%s) + RETRY_SECONDS ))
  until "$@"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "giving up after ${RETRY_SECONDS}s: $*"
      return 1
    fi
    sleep "$RETRY_DELAY"
  done
}

download() {  # download URL FILE
  curl --fail --silent --show-error --location --connect-timeout 10 --max-time 300 -o "$2.part" "$1" &&
    mv "$2.part" "$2"
}
"""

# ... and IMDSv2 credentials and SigV4-signed SSM calls (Ubuntu images carry curl >= 8 and python3,
# but no AWS CLI).
_SSM_SH = r"""
json_get() {  # json_get KEY[.KEY...] < JSON: the value, or fail
  python3 -c 'import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1].split("."):
    value = value[key]
sys.stdout.write(value if isinstance(value, str) else json.dumps(value))' "$1"
}

credentials() {  # the instance role's keys from IMDSv2 into AK, SK, ST
  imds_token=$(curl --fail --silent --show-error --max-time 5 -X PUT \
    -H "X-aws-ec2-metadata-token-ttl-seconds: 300" "$IMDS/api/token") || return 1
  role=$(curl --fail --silent --show-error --max-time 5 -H "X-aws-ec2-metadata-token: $imds_token" \
    "$IMDS/meta-data/iam/security-credentials/") || return 1
  [ -n "$role" ] || return 1
  creds=$(curl --fail --silent --show-error --max-time 5 -H "X-aws-ec2-metadata-token: $imds_token" \
    "$IMDS/meta-data/iam/security-credentials/$role") || return 1
  AK=$(printf %s "$creds" | json_get AccessKeyId) &&
    SK=$(printf %s "$creds" | json_get SecretAccessKey) &&
    ST=$(printf %s "$creds" | json_get Token)
}

ssm() {  # ssm ACTION JSON: SSM's answer on stdout; on failure SSM's own error text goes to the log
  credentials || { log "no instance role credentials from IMDS yet"; return 1; }
  if answer=$(curl --silent --show-error --fail-with-body --connect-timeout 10 --max-time 60 \
      --aws-sigv4 "aws:amz:$REGION:ssm" --user "$AK:$SK" -H "x-amz-security-token: $ST" \
      -H "X-Amz-Target: AmazonSSM.$1" -H "Content-Type: application/x-amz-json-1.1" \
      --data "$2" "https://$SSM_HOST/"); then
    printf %s "$answer"
  else
    log "SSM $1 failed: $answer"
    return 1
  fi
}

fetch_secret() {  # fetch_secret REQUEST FILE: a SecureString into FILE (0600); nothing is left behind on failure
  value=$(ssm GetParameter "$1" | json_get Parameter.Value) || return 1
  if [ -z "$value" ]; then
    log "the parameter in $1 is empty"
    return 1
  fi
  if ! (umask 077 && printf %s "$value" > "$2.tmp" && mv "$2.tmp" "$2"); then
    rm -f "$2.tmp"
    return 1
  fi
}
"""

_RKE2_SH = r"""
write_join_address() {
  printf 'server: https://%s:%s\n' "$ENDPOINT" "$SUPERVISOR_PORT" >> "$ROOT$CONFIG"
}

marker_state() {  # the init marker's value: "pending" until the first server has initialised the cluster
  ssm GetParameter "$MARKER_REQUEST" | json_get Parameter.Value
}

peer_answers() {  # is another server of this cluster serving RKE2's supervisor?
  for ip in $PEER_IPS; do
    if curl --silent --insecure --fail --connect-timeout 3 --max-time 5 -o /dev/null "https://$ip:$SUPERVISOR_PORT/cacerts"; then
      return 0
    fi
  done
  return 1
}

publish_kubeconfig() {  # the admin kubeconfig, pointed at the endpoint, as a SecureString only admins can decrypt
  [ -s "$ROOT$ADMIN_KUBECONFIG" ] || return 1
  body=$(sed "s#https://127.0.0.1:$API_PORT#https://$ENDPOINT:$API_PORT#" "$ROOT$ADMIN_KUBECONFIG" | python3 -c 'import json, sys
print(json.dumps({"Name": sys.argv[1], "Value": sys.stdin.read(), "Type": "SecureString", "KeyId": sys.argv[2],
                  "Overwrite": True, "Tier": "Advanced"}))' "$KUBECONFIG_PARAMETER" "$KUBECONFIG_KEY") || return 1
  ssm PutParameter "$body" >/dev/null
}

mark_initialised() {
  ssm PutParameter "$(printf '{"Name": "%s", "Value": "initialized by %s at %s", "Type": "String", "Overwrite": true}' \
    "$MARKER_PARAMETER" "$NODE_NAME" "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" >/dev/null
}

log "bootstrap of $NODE_NAME ($KIND), RKE2 $INSTALL_VERSION"
retry fetch_secret "$TOKEN_REQUEST" "$ROOT$TOKEN_FILE"
if [ -n "$AGENT_TOKEN_REQUEST" ]; then
  retry fetch_secret "$AGENT_TOKEN_REQUEST" "$ROOT$AGENT_TOKEN_FILE"
fi

MODE='join'
if [ "$INITIALISER" = yes ]; then
  # Initialise a cluster only when none exists: never once the marker says one was initialised
  # (a replaced first server with a fresh disk would otherwise start a second, empty cluster), and
  # not while another server answers (the marker write may have failed).
  state=$(retry marker_state)
  if [ "${state%% *}" = initialized ]; then
    log "the cluster exists ($state): joining at $ENDPOINT"
    write_join_address
  elif peer_answers; then
    log "another server answers: joining at $ENDPOINT"
    write_join_address
  else
    log "no cluster exists yet: initialising it"
    MODE='init'
  fi
fi

if [ "$KIND" = server ] && [ -n "$MANIFEST_PATH" ]; then
  retry "$ROOT$SYNC"
fi

if [ "$CIS" = yes ] && [ "$KIND" = server ] && ! getent passwd etcd >/dev/null; then
  # The CIS profile makes RKE2 refuse to start a server without an etcd user and group.
  useradd -r -c "etcd user" -s /sbin/nologin -M etcd -U
fi

retry download "$INSTALL_SCRIPT_URL" "$ROOT$WORK/install-rke2.sh"
retry env INSTALL_RKE2_TYPE="$KIND" INSTALL_RKE2_VERSION="$INSTALL_VERSION" sh "$ROOT$WORK/install-rke2.sh"

if [ "$CIS" = yes ]; then
  # The kernel parameters the CIS profile checks (protect-kernel-defaults is forced on), from the
  # file the tarball install ships.
  mkdir -p "$ROOT/etc/sysctl.d"
  copied=no
  for source in $CIS_SYSCTL_SOURCES; do
    if [ -f "$ROOT$source" ]; then
      cp -f "$ROOT$source" "$ROOT/etc/sysctl.d/60-rke2-cis.conf"
      copied=yes
      break
    fi
  done
  if [ "$copied" = no ]; then
    log "no rke2-cis-sysctl.conf in $CIS_SYSCTL_SOURCES: the CIS profile will refuse to start the kubelet"
    exit 1
  fi
  systemctl restart systemd-sysctl
fi
systemctl enable --now "rke2-$KIND.service"

if [ "$MODE" = init ]; then
  # From now on this server is one member among others: should its etcd data ever be dropped (the
  # member removed, `kubectl delete node`), RKE2 must rejoin at the endpoint, not initialise a second
  # cluster (k3s-io/k3s#13623). RKE2 reads the file only at start, so the running server is unaffected.
  write_join_address
  retry mark_initialised
  log "cluster initialised; marker written"
  if [ -n "$KUBECONFIG_PARAMETER" ]; then
    # The cluster runs either way: a failed publish only means setting kubeconfig by hand.
    if retry publish_kubeconfig; then
      log "admin kubeconfig published to $KUBECONFIG_PARAMETER"
    else
      log "admin kubeconfig NOT published to $KUBECONFIG_PARAMETER; set the stack's kubeconfig from $ADMIN_KUBECONFIG"
    fi
  fi
fi
if [ "$KIND" = server ] && [ -n "$MANIFEST_PATH" ]; then
  systemctl enable --now rke-aws-sync-manifests.timer
fi
log "bootstrap done ($MODE)"
"""

_SYNC_SH = r"""
# Mirror the parameters under MANIFEST_PATH into RKE2's manifests directory: <name>.yaml holds a
# manifest, <name>.url the address of one to download. Files this script wrote whose parameter
# is gone are removed. Every server converges on the same content, whatever its age.
# Every page (SSM answers at most MaxResults a time); a short read would delete files.
mkdir -p "$ROOT$MANIFESTS"
downloads=$(mktemp)
pages=$(mktemp)
trap 'rm -f "$downloads" "$pages"' EXIT
request=$MANIFEST_REQUEST
while :; do
  answer=$(ssm GetParametersByPath "$request") || exit 1
  printf '%s\n' "$answer" >> "$pages"
  request=$(printf %s "$answer" | python3 -c 'import json, sys
token = json.load(sys.stdin).get("NextToken")
if token:
    request = json.loads(sys.argv[1])
    request["NextToken"] = token
    print(json.dumps(request))' "$MANIFEST_REQUEST") || exit 1
  [ -n "$request" ] || break
done
python3 -c '
import json, os, sys
directory, prefix = sys.argv[1], sys.argv[2]
wanted = {}
text, at, decoder = open(sys.argv[3]).read(), 0, json.JSONDecoder()
while text[at:].strip():
    page, at = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
    for parameter in page.get("Parameters", []):
        wanted[prefix + parameter["Name"].rsplit("/", 1)[1]] = parameter["Value"]
for name in sorted(os.listdir(directory)):
    base = name[:-len(".source")] if name.endswith(".source") else name
    if name.startswith(prefix) and base not in wanted and base[:-len(".yaml")] + ".url" not in wanted:
        os.remove(os.path.join(directory, name))
for name, value in sorted(wanted.items()):
    if name.endswith(".url"):
        print(name[:-len(".url")] + ".yaml", value)
        continue
    path = os.path.join(directory, name)
    old = open(path).read() if os.path.exists(path) else None
    if old != value:
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # some hold credentials
        with os.fdopen(fd, "w") as f:
            f.write(value)
        os.replace(path + ".tmp", path)
' "$ROOT$MANIFESTS" "$PREFIX" "$pages" > "$downloads"
while read -r file url; do
  if [ "$(cat "$ROOT$MANIFESTS/$file.source" 2>/dev/null)" != "$url" ]; then
    download "$url" "$ROOT$MANIFESTS/$file.download"
    mv "$ROOT$MANIFESTS/$file.download" "$ROOT$MANIFESTS/$file"
    printf %s "$url" > "$ROOT$MANIFESTS/$file.source"
  fi
done < "$downloads"
"""

_RKE_SH = r"""
log "bootstrap of $NODE_NAME (RKE1 node, Docker $DOCKER_VERSION)"
for module in $KERNEL_MODULES; do modprobe "$module"; done
sysctl --system >/dev/null
retry download "$DOCKER_INSTALL_URL" "$ROOT$WORK/install-docker.sh"
retry sh "$ROOT$WORK/install-docker.sh"
usermod -aG docker "$SSH_USER"
systemctl enable --now docker
log "bootstrap done"
"""

IMDS_URL = "http://169.254.169.254/latest"
INSTALL_RKE2_URL = "https://get.rke2.io"


# The generator the scripts' header names: the module's path before the layers (components/node/). Kept
# as it was: the header is part of every node's user data, and changing it would change every instance.
GENERATOR = "components/bootstrap.py"


def _script(purpose: str, settings: Mapping[str, Any], *bodies: str) -> str:
    fixed = {
        # Tests run the script against a scratch directory and a short budget; nodes never set these.
        "ROOT": "${RKE_AWS_ROOT:-}",
        "RETRY_SECONDS": f"${{RKE_AWS_RETRY_SECONDS:-{RETRY_SECONDS}}}",
        "RETRY_DELAY": f"${{RKE_AWS_RETRY_DELAY:-{RETRY_DELAY}}}",
    }
    return (
        "#!/bin/sh\n"
        f"# {purpose}. Generated by rke-aws ({GENERATOR}).\n"
        "set -eu\n"
        + "".join(f'{k}="{v}"\n' for k, v in fixed.items())
        + _assignments(settings)
        + "".join(bodies)
    )


@dataclass(frozen=True)
class Rke2Boot:
    """What every RKE2 node of the cluster boots with (besides its own identity)."""
    region: str
    ssm_host: str  # ssm.<region>.<partition DNS suffix>
    install_version: str  # INSTALL_RKE2_VERSION: exactly the configured kubernetesVersion
    endpoint: str  # the registration host name, in every server's tls-san and every joiner's server:
    server_ips: tuple[str, ...]  # the planned servers, probed before initialising
    token_parameter: str
    marker_parameter: str
    agent_token_parameter: Optional[str] = None
    manifest_path: Optional[str] = None  # SSM path whose parameters mirror into the manifests dir
    leader_migration: bool = False
    etcd_s3: Optional["EtcdS3"] = None  # servers snapshot etcd to S3 with their role
    cis_profile: Optional[str] = None  # RKE2's CIS profile name for the installed version, or None
    kubeconfig_parameter: Optional[str] = None  # where the initialising server publishes the admin kubeconfig
    kubeconfig_key: Optional[str] = None  # the KMS key it is encrypted with


# Written on servers with hardening: cis (RKE2's CIS profile enforces restricted Pod Security with
# exemptions): system-upgrade-controller's upgrade jobs must run privileged in their namespace.
PSA_CONFIG_PATH = "/etc/rancher/rke2/rke-aws-pss.yaml"
AUDIT_POLICY_PATH = "/etc/rancher/rke2/audit-policy.yaml"
# Where RKE2's install puts its CIS kernel parameters file: the tarball install under /usr/local
# (Ubuntu), or /opt/rke2 when /usr/local is read-only; RPM installs under /usr.
CIS_SYSCTL_SOURCES = ("/usr/local/share/rke2/rke2-cis-sysctl.conf", "/opt/rke2/share/rke2/rke2-cis-sysctl.conf",
                      "/usr/share/rke2/rke2-cis-sysctl.conf")
# RKE2's own restricted configuration exempts kube-system, cis-operator-system,
# compliance-operator-system (Rancher 2.12+) and tigera-operator (rancher/rke2 pkg/rke2/psa.go).
PSA_EXEMPT_NAMESPACES = ("kube-system", "cis-operator-system", "compliance-operator-system", "tigera-operator",
                         "system-upgrade")
PSA_CONFIG = {
    "apiVersion": "apiserver.config.k8s.io/v1",
    "kind": "AdmissionConfiguration",
    "plugins": [{"name": "PodSecurity", "configuration": {
        "apiVersion": "pod-security.admission.config.k8s.io/v1",
        "kind": "PodSecurityConfiguration",
        "defaults": {"enforce": "restricted", "enforce-version": "latest", "audit": "restricted",
                     "audit-version": "latest", "warn": "restricted", "warn-version": "latest"},
        "exemptions": {"usernames": [], "runtimeClasses": [], "namespaces": list(PSA_EXEMPT_NAMESPACES)},
    }}],
}
# Requests' metadata for everything, nothing for the noisiest read-only endpoints (RKE2's default
# policy logs nothing at all).
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "None", "nonResourceURLs": ["/healthz*", "/livez*", "/readyz*", "/version"]},
        {"level": "None", "users": ["system:kube-proxy"], "verbs": ["watch"]},
        {"level": "Metadata"},
    ],
}


def cis_profile(version: str) -> str:
    """RKE2's CIS profile name. `cis` exists since v1.25.15 / v1.26.10 / v1.27.7 / v1.28.2; `cis-1.23`
    is refused (rke2 exits) since v1.30.14 / v1.31.10 / v1.32.6 / v1.33.2 and 1.34 (rancher/rke2
    PR #8349), so `cis` wherever it exists."""
    return "cis" if rke2_patch_at_least(version, {25: 15, 26: 10, 27: 7, 28: 2}, 29) else "cis-1.23"


def _get_request(name: str, decrypt: bool) -> str:
    return json.dumps({"Name": name, "WithDecryption": decrypt})


def rke2_config(node: NodePlan, boot: Rke2Boot) -> dict[str, Any]:
    """/etc/rancher/rke2/config.yaml of one node; only keys valid for its type (server or agent).

    Tokens are referenced by file; the files are fetched from SSM at boot. The initialising server
    has no `server:` key: its boot script adds one before starting RKE2 when a cluster already
    exists, and after initialising one (so a later restart without etcd data rejoins).
    """
    server = node.pool.is_server
    doc: dict[str, Any] = {}
    if server or boot.agent_token_parameter is None:
        doc["token-file"] = RKE2_TOKEN_PATH
    else:
        doc["token-file"] = RKE2_AGENT_TOKEN_PATH  # agents hold the agent token only
    if server and boot.agent_token_parameter is not None:
        doc["agent-token-file"] = RKE2_AGENT_TOKEN_PATH
    if not node.is_first_server:
        doc["server"] = f"https://{boot.endpoint}:{RKE2_SUPERVISOR_PORT}"
    doc["node-name"] = node.name
    doc["node-ip"] = node.private_ip
    # Leader migration (Kubernetes <= 1.26 only, enforced in config.py): the in-tree provider keeps
    # running while it hands its controllers to the CCM.
    doc["cloud-provider-name"] = "aws" if boot.leader_migration else "external"
    if boot.cis_profile:
        doc["profile"] = boot.cis_profile
    if server:
        doc["tls-san"] = [boot.endpoint, node.name, node.private_ip]
        if boot.etcd_s3:
            doc.update(etcd_s3_keys(boot.etcd_s3, boot.install_version))
        if boot.cis_profile:
            doc["audit-policy-file"] = AUDIT_POLICY_PATH
            doc["pod-security-admission-config-file"] = PSA_CONFIG_PATH
        if boot.leader_migration:
            doc["kube-controller-manager-arg"] = ["enable-leader-migration=true"]
        else:
            # cloud-provider-name: external alone leaves RKE2's own cloud controller running.
            doc["disable-cloud-controller"] = True
    return doc


def rke2_boot_script(node: NodePlan, boot: Rke2Boot) -> str:
    server = node.pool.is_server
    agent_token = boot.agent_token_parameter
    token = boot.token_parameter if (server or agent_token is None) else agent_token
    settings = {
        "NODE_NAME": node.name,
        "KIND": "server" if server else "agent",
        "INSTALL_VERSION": boot.install_version,
        "INSTALL_SCRIPT_URL": INSTALL_RKE2_URL,
        "REGION": boot.region,
        "SSM_HOST": boot.ssm_host,
        "IMDS": IMDS_URL,
        "ENDPOINT": boot.endpoint,
        "SUPERVISOR_PORT": RKE2_SUPERVISOR_PORT,
        "INITIALISER": "yes" if node.is_first_server else "no",
        "PEER_IPS": " ".join(ip for ip in boot.server_ips if ip != node.private_ip),
        "CONFIG": RKE2_CONFIG_PATH,
        "TOKEN_FILE": RKE2_TOKEN_PATH if (server or agent_token is None) else RKE2_AGENT_TOKEN_PATH,
        "TOKEN_REQUEST": _get_request(token, True),
        "AGENT_TOKEN_FILE": RKE2_AGENT_TOKEN_PATH,
        "AGENT_TOKEN_REQUEST": _get_request(agent_token, True) if (server and agent_token) else "",
        "MARKER_PARAMETER": boot.marker_parameter,
        "MARKER_REQUEST": _get_request(boot.marker_parameter, False),
        "MANIFEST_PATH": (boot.manifest_path or "") if server else "",
        "CIS": "yes" if boot.cis_profile else "no",
        "CIS_SYSCTL_SOURCES": " ".join(CIS_SYSCTL_SOURCES),
        "KUBECONFIG_PARAMETER": (boot.kubeconfig_parameter or "") if node.is_first_server else "",
        "KUBECONFIG_KEY": (boot.kubeconfig_key or "") if node.is_first_server else "",
        "ADMIN_KUBECONFIG": "/etc/rancher/rke2/rke2.yaml",
        "API_PORT": KUBE_API_PORT,
        "SYNC": SYNC_PATH,
        "WORK": "/var/lib/rke-aws",
    }
    return _script("RKE2 node bootstrap: tokens, init-or-join, install, start", settings, _RETRY_SH, _SSM_SH,
                   'mkdir -p "$ROOT$WORK"\n', _RKE2_SH)


def manifest_sync_script(boot: Rke2Boot) -> str:
    settings = {
        "REGION": boot.region,
        "SSM_HOST": boot.ssm_host,
        "IMDS": IMDS_URL,
        "MANIFESTS": RKE2_MANIFESTS_DIR,
        "PREFIX": MANIFEST_PREFIX,
        # WithDecryption: a manifest holding a credential is a SecureString (manifests.py).
        "MANIFEST_REQUEST": json.dumps({"Path": boot.manifest_path, "Recursive": False, "MaxResults": 10,
                                        "WithDecryption": True}),
    }
    return _script("Mirror this cluster's manifests from SSM into RKE2's manifests directory", settings,
                   _RETRY_SH, _SSM_SH, _SYNC_SH)


# systemd units that re-run the manifest sync on every server, so changed manifests (CCM values,
# upgrade Plans) reach running servers: their user data is ignored after the first boot.
SYNC_SERVICE = f"""[Unit]
Description=rke-aws: mirror the cluster's manifests from SSM into RKE2's manifests directory
After=network-online.target

[Service]
Type=oneshot
ExecStart={SYNC_PATH}
"""
SYNC_TIMER = f"""[Unit]
Description=rke-aws: mirror the cluster's manifests every {SYNC_INTERVAL}

[Timer]
OnBootSec={SYNC_INTERVAL}
OnUnitActiveSec={SYNC_INTERVAL}

[Install]
WantedBy=timers.target
"""


def rke2_user_data(node: NodePlan, boot: Rke2Boot) -> str:
    """cloud-init for an RKE2 node: hostname, config.yaml, the boot script (and on servers in manifest
    mode the manifest sync with its timer), then one runcmd: the boot script."""
    files = [
        {"path": RKE2_CONFIG_PATH, "permissions": "0600", "content": rke2_config_yaml(rke2_config(node, boot))},
        {"path": BOOTSTRAP_PATH, "permissions": "0700", "content": rke2_boot_script(node, boot)},
    ]
    if node.pool.is_server and boot.cis_profile:
        files += [
            {"path": PSA_CONFIG_PATH, "permissions": "0600", "content": dump_yaml(PSA_CONFIG)},
            {"path": AUDIT_POLICY_PATH, "permissions": "0600", "content": dump_yaml(AUDIT_POLICY)},
        ]
    if node.pool.is_server and boot.manifest_path:
        files += [
            {"path": SYNC_PATH, "permissions": "0700", "content": manifest_sync_script(boot)},
            {"path": "/etc/systemd/system/rke-aws-sync-manifests.service", "permissions": "0644", "content": SYNC_SERVICE},
            {"path": "/etc/systemd/system/rke-aws-sync-manifests.timer", "permissions": "0644", "content": SYNC_TIMER},
        ]
    # One command: cloud-init runs every runcmd entry even after a failure, and RKE2 must not start
    # without its token.
    doc = {**_hostname(node), "write_files": files, "runcmd": [[BOOTSTRAP_PATH]]}
    return _cloud_config(doc)


# EC2 refuses user data over 16 KiB in raw form, before base64 (RunInstances API reference,
# UserData). terraform-provider-aws checks `user_data` against 16,384 only as text and
# `user_data_base64` only for being base64 (internal/service/ec2/ec2_instance.go), so nothing but
# this program stands between a large cloud-config and a failed RunInstances.
USER_DATA_LIMIT = 16384
# The largest payload any configuration may produce: a quarter of the limit kept free for what a
# later change adds to the boot (config.py refuses what would exceed it; tests build the worst case).
USER_DATA_BUDGET = 12288
# gzip's header for a deterministic payload: no file name, no modification time (0), maximum
# compression flag, OS "unknown" (RFC 1952 section 2.3). Written out because gzip.compress(mtime=0)
# lets zlib choose the OS byte since Python 3.11, and that differs between platforms.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
GZIP_LEVEL = 9


def gzip_user_data(text: str) -> bytes:
    """The raw bytes EC2 stores for a node: `text` gzip-compressed, the same bytes on every run and
    machine with the same zlib (cloud-init recognises the gzip magic and decompresses before parsing:
    cloudinit/user_data.py, util.decomp_gzip)."""
    data = text.encode()
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = packer.compress(data) + packer.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def encode_user_data(text: str) -> str:
    """What the instance's `user_data_base64` input carries: the gzip payload, base64-encoded (the
    provider sends it to RunInstances as given). offline/review.py decodes it for reviewers."""
    return base64.b64encode(gzip_user_data(text)).decode()


def raw_size(encoded: str) -> int:
    """The size EC2 limits: the bytes before base64."""
    return len(base64.b64decode(encoded, validate=True))


def rke2_config_yaml(doc: Mapping[str, Any]) -> str:
    return dump_yaml(dict(doc))


def rke_boot_script(node: NodePlan, ssh_user: str) -> str:
    settings = {
        "NODE_NAME": node.name,
        "DOCKER_VERSION": versions.RKE_DOCKER_VERSION,
        "DOCKER_INSTALL_URL": f"https://releases.rancher.com/install-docker/{versions.RKE_DOCKER_VERSION}.sh",
        "KERNEL_MODULES": " ".join(RKE_KERNEL_MODULES),
        "SSH_USER": ssh_user,
        "WORK": "/var/lib/rke-aws",
    }
    return _script("RKE1 node bootstrap: kernel settings and the Docker engine RKE supports", settings,
                   _RETRY_SH, 'mkdir -p "$ROOT$WORK"\n', _RKE_SH)


def rke_user_data(node: NodePlan, ssh_user: str) -> str:
    """cloud-init for an RKE1 node: hostname, kernel settings, a Docker engine RKE supports."""
    sysctl = "".join(f"{k} = {v}\n" for k, v in RKE_SYSCTLS.items())
    modules = "".join(f"{m}\n" for m in RKE_KERNEL_MODULES)
    doc = {
        **_hostname(node),
        "write_files": [
            {"path": "/etc/modules-load.d/rke.conf", "content": modules},
            {"path": "/etc/sysctl.d/90-rke.conf", "content": sysctl},
            {"path": BOOTSTRAP_PATH, "permissions": "0700", "content": rke_boot_script(node, ssh_user)},
        ],
        "runcmd": [[BOOTSTRAP_PATH]],
    }
    return _cloud_config(doc)


def rke_cluster_config(
    nodes: Sequence[NodePlan],
    public_ips: Mapping[str, str],
    *,
    cluster_id: str,
    kubernetes_version: str,
    ssh_user: str,
    ssh_key_path: Optional[str],
    leader_migration: bool,
    api_endpoint: Optional[str] = None,
    etcd_s3: Optional[EtcdS3] = None,
) -> dict[str, Any]:
    """cluster.yml for `rke up`. `public_ips` maps node name to its public IP (absent: private only)."""
    doc: dict[str, Any] = {
        "cluster_name": cluster_id,
        "kubernetes_version": kubernetes_version,
        "nodes": [
            {
                "address": public_ips.get(n.name) or n.private_ip,
                "internal_address": n.private_ip,
                # Standalone `rke up` with external-aws needs this equal to the private DNS name.
                "hostname_override": n.name,
                "user": ssh_user,
                "role": list(n.roles),
            }
            for n in nodes
        ],
    }
    if ssh_key_path:
        doc["ssh_key_path"] = ssh_key_path
    if api_endpoint:
        # The API server's certificate must name the endpoint kubectl and nodes use.
        doc["authentication"] = {"strategy": "x509", "sans": [api_endpoint]}
    services: dict[str, Any] = {}
    if etcd_s3:
        # No access_key/secret_key: RKE's backup container then uses the etcd nodes' instance role.
        # snapshot: true is RKE's default; explicit because it, not backup_config.enabled, starts
        # the rolling snapshot container (rke services/etcd.go).
        services["etcd"] = {"snapshot": True, "backup_config": {
            "enabled": True, "interval_hours": etcd_s3.interval_hours, "retention": etcd_s3.retention,
            "s3backupconfig": {"bucket_name": etcd_s3.bucket, "region": etcd_s3.region, "folder": etcd_s3.folder,
                               "endpoint": etcd_s3.endpoint}}}
    if leader_migration:
        # Migration phase: the in-tree provider keeps running, handing its controllers to the CCM.
        doc["cloud_provider"] = {"name": RKE_IN_TREE_PROVIDER}
        services["kube-controller"] = {"extra_args": {"enable-leader-migration": "true"}}
    else:
        doc["cloud_provider"] = {"name": RKE_EXTERNAL_PROVIDER}
    if services:
        doc["services"] = services
    return doc


def rke_cluster_yml(*args: Any, **kwargs: Any) -> str:
    return dump_yaml(rke_cluster_config(*args, **kwargs))


