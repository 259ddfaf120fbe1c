"""Keys RKE2 accepts in /etc/rancher/rke2/config.yaml, per subcommand, for the tests.

Written from rancher/rke2 at v1.33.5+rke2r1 (commit d1092839cf08), not from components/: RKE2
builds `rke2 server` and `rke2 agent` from k3s's flags through the tables in pkg/cli/cmds/server.go
and agent.go (dropFlag removes a k3s flag, copyFlag/hideFlag keep it) plus its own flags in
root.go, and registers the result as the config file's valid keys (configfilearg ValidFlags). A
key outside the set is skipped with only a log line ("Unknown flag ... found in config.yaml,
skipping"; k3s pkg/configfilearg/parser.go), so a misplaced key silently does nothing: the tests
must catch it. The agent set is a strict subset of the server set.

Version notes: `etcd-s3-retention` exists from v1.31.12, v1.32.8, v1.33.4 and v1.34.1; `profile: cis`
from v1.25.15 / v1.26.10 / v1.27.7 / v1.28.2, and `cis-1.23` is refused from v1.30.14 / v1.31.10 /
v1.32.6 / v1.33.2 and in every 1.34 (rancher/rke2 pkg/rke2 profile validation, PR #8349).
"""

RKE2_SERVER_KEYS = frozenset({
    "advertise-address", "agent-token", "agent-token-file", "airgap-extra-registry", "alsologtostderr",
    "audit-policy-file", "bind-address", "cloud-controller-manager-extra-env",
    "cloud-controller-manager-extra-mount", "cloud-controller-manager-image", "cloud-provider-config",
    "cloud-provider-name", "cluster-cidr", "cluster-dns", "cluster-domain", "cluster-reset",
    "cluster-reset-restore-path", "cni", "config", "container-runtime-endpoint",
    "control-plane-probe-configuration", "control-plane-resource-limits", "control-plane-resource-requests",
    "data-dir", "datastore-cafile", "datastore-certfile", "datastore-endpoint", "datastore-keyfile", "debug",
    "default-runtime", "disable", "disable-agent", "disable-apiserver", "disable-cloud-controller",
    "disable-controller-manager", "disable-default-registry-endpoint", "disable-etcd", "disable-kube-proxy",
    "disable-scheduler", "egress-selector-mode", "embedded-registry", "enable-pprof", "enable-servicelb",
    "etcd-arg", "etcd-disable-snapshots", "etcd-expose-metrics", "etcd-extra-env", "etcd-extra-mount",
    "etcd-image", "etcd-s3", "etcd-s3-access-key", "etcd-s3-bucket", "etcd-s3-bucket-lookup-type",
    "etcd-s3-config-secret", "etcd-s3-endpoint", "etcd-s3-endpoint-ca", "etcd-s3-folder", "etcd-s3-insecure",
    "etcd-s3-proxy", "etcd-s3-region", "etcd-s3-retention", "etcd-s3-secret-key", "etcd-s3-session-token",
    "etcd-s3-skip-ssl-verify", "etcd-s3-timeout", "etcd-snapshot-compress", "etcd-snapshot-dir",
    "etcd-snapshot-name", "etcd-snapshot-reconcile-interval", "etcd-snapshot-retention",
    "etcd-snapshot-schedule-cron", "helm-job-image", "image-credential-provider-bin-dir",
    "image-credential-provider-config", "ingress-controller", "kube-apiserver-arg",
    "kube-apiserver-extra-env", "kube-apiserver-extra-mount", "kube-apiserver-image",
    "kube-cloud-controller-manager-arg", "kube-controller-manager-arg", "kube-controller-manager-extra-env",
    "kube-controller-manager-extra-mount", "kube-controller-manager-image", "kube-proxy-arg",
    "kube-proxy-extra-env", "kube-proxy-extra-mount", "kube-proxy-image", "kube-scheduler-arg",
    "kube-scheduler-extra-env", "kube-scheduler-extra-mount", "kube-scheduler-image", "kubelet-arg",
    "kubelet-path", "lb-server-port", "log", "node-external-dns", "node-external-ip", "node-internal-dns",
    "node-ip", "node-label", "node-name", "node-name-from-cloud-provider-metadata", "node-taint",
    "nonroot-devices", "pause-image", "pod-security-admission-config-file", "private-registry", "profile",
    "protect-kernel-defaults", "resolv-conf", "runtime-image", "secrets-encryption",
    "secrets-encryption-provider", "selinux", "server", "service-cidr", "service-node-port-range",
    "servicelb-namespace", "snapshotter", "supervisor-metrics", "system-default-registry", "tls-san",
    "tls-san-security", "token", "token-file", "v", "vmodule", "with-node-id", "write-kubeconfig",
    "write-kubeconfig-group", "write-kubeconfig-mode",
})

RKE2_AGENT_KEYS = frozenset({
    "airgap-extra-registry", "alsologtostderr", "audit-policy-file", "bind-address",
    "cloud-controller-manager-extra-env", "cloud-controller-manager-extra-mount",
    "cloud-controller-manager-image", "cloud-provider-config", "cloud-provider-name", "config",
    "container-runtime-endpoint", "control-plane-probe-configuration", "control-plane-resource-limits",
    "control-plane-resource-requests", "data-dir", "debug", "default-runtime",
    "disable-default-registry-endpoint", "enable-pprof", "etcd-extra-env", "etcd-extra-mount", "etcd-image",
    "image-credential-provider-bin-dir", "image-credential-provider-config", "kube-apiserver-extra-env",
    "kube-apiserver-extra-mount", "kube-apiserver-image", "kube-controller-manager-extra-env",
    "kube-controller-manager-extra-mount", "kube-controller-manager-image", "kube-proxy-arg",
    "kube-proxy-extra-env", "kube-proxy-extra-mount", "kube-proxy-image", "kube-scheduler-extra-env",
    "kube-scheduler-extra-mount", "kube-scheduler-image", "kubelet-arg", "kubelet-path", "lb-server-port",
    "log", "node-external-dns", "node-external-ip", "node-internal-dns", "node-ip", "node-label", "node-name",
    "node-name-from-cloud-provider-metadata", "node-taint", "nonroot-devices", "pause-image",
    "pod-security-admission-config-file", "private-registry", "profile", "protect-kernel-defaults",
    "resolv-conf", "runtime-image", "selinux", "server", "snapshotter", "system-default-registry", "token",
    "token-file", "v", "vmodule", "with-node-id",
})

assert RKE2_AGENT_KEYS < RKE2_SERVER_KEYS
