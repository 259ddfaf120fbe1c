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
