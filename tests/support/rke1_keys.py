"""Keys rancher/rke reads from cluster.yml, for the tests (not from components/): the YAML names of
RancherKubernetesEngineConfig, RKEConfigNode and the cloud provider's fields in rancher/rke's types
(rke_types.go). RKE drops an unknown key silently, so the tests check every key the program writes."""

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


# services.<name> keys every service takes (BaseService), and kube-api's own (KubeAPIService), rke_types.go.
RKE_BASE_SERVICE_KEYS = frozenset({
    "image", "extra_args", "extra_args_array", "extra_binds", "extra_env",
    "win_extra_args", "win_extra_args_array", "win_extra_binds", "win_extra_env",
})


RKE_KUBE_API_KEYS = RKE_BASE_SERVICE_KEYS | frozenset({
    "service_cluster_ip_range", "service_node_port_range", "pod_security_configuration", "always_pull_images",
    "secrets_encryption_config", "audit_log", "admission_configuration", "event_rate_limit",
})
