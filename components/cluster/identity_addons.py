"""The identity add-ons in the cluster (issue 36): the pod identity webhook's serving certificate and the two
charts (amazon-eks-pod-identity-webhook, aws-load-balancer-controller) as Helm releases; manifest mode ships
the same charts as HelmChart manifests (components/assembly/boot.py). Values: plan/identity_webhook.py and
plan/identity_lbc.py.

The webhook's certificate: the chart cannot make one without cert-manager (plan/identity_webhook.py), so the
program makes a CA (pulumi-tls SelfSignedCert, is_ca_certificate) and a serving certificate it signs for the
webhook service's DNS names (LocallySignedCert), puts both halves in the TLS Secret the chart reads
(`pki.existingSecret`), and the CA into `pki.caBundle` of the MutatingWebhookConfiguration. Ten years: the
webhook reloads its certificate from disk, but nothing here renews it (docs/features/identity.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pulumi_tls as tls

from ..plan import identity_lbc, identity_webhook
from . import charts

CERT_HOURS = 10 * 365 * 24  # the CA's and the serving certificate's validity


class WebhookCertificate(pulumi.ComponentResource):
    """A CA and the serving certificate it signs for the webhook's service names (plan/identity_webhook.py)."""

    def __init__(self, name: str, cluster_id: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:identity:WebhookCertificate", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        ca_key = tls.PrivateKey(f"{name}-webhook-ca", algorithm="RSA", rsa_bits=2048, opts=child)
        ca = tls.SelfSignedCert(
            f"{name}-webhook-ca", private_key_pem=ca_key.private_key_pem, is_ca_certificate=True,
            subject=tls.SelfSignedCertSubjectArgs(common_name=f"rke-aws {cluster_id} pod identity webhook CA"),
            validity_period_hours=CERT_HOURS, allowed_uses=["cert_signing", "crl_signing", "digital_signature"],
            opts=child)
        key = tls.PrivateKey(f"{name}-webhook-serving", algorithm="RSA", rsa_bits=2048, opts=child)
        dns_names = identity_webhook.serving_dns_names()
        request = tls.CertRequest(f"{name}-webhook-serving", private_key_pem=key.private_key_pem, dns_names=dns_names,
                                  subject=tls.CertRequestSubjectArgs(common_name=dns_names[0]), opts=child)
        cert = tls.LocallySignedCert(
            f"{name}-webhook-serving", cert_request_pem=request.cert_request_pem, ca_private_key_pem=ca_key.private_key_pem,
            ca_cert_pem=ca.cert_pem, validity_period_hours=CERT_HOURS,
            allowed_uses=["digital_signature", "key_encipherment", "server_auth"], opts=child)
        self.ca_pem: pulumi.Output[str] = ca.cert_pem
        self.cert_pem: pulumi.Output[str] = cert.cert_pem
        self.key_pem: pulumi.Output[str] = pulumi.Output.secret(key.private_key_pem)
        self.register_outputs({})

    def secret_manifest(self) -> pulumi.Output[str]:
        """The TLS Secret as a manifest (manifest mode: a SecureString the servers mirror)."""
        return pulumi.Output.secret(pulumi.Output.all(self.cert_pem, self.key_pem).apply(
            lambda pair: identity_webhook.tls_secret_manifest(*pair)))


@dataclass(frozen=True)
class IdentityAddonsArgs:
    provider: k8s.Provider
    certificate: WebhookCertificate
    webhook_values: pulumi.Input[dict[str, Any]]
    lbc_values: dict[str, Any] | None = None  # None: no Load Balancer Controller
    lbc_depends_on: tuple[pulumi.Resource, ...] = ()
    chart_location: tuple[str | None, str | None] = (None, None)  # registry.charts and its CA (cluster_documents.chart_location)


class IdentityAddons(pulumi.ComponentResource):
    """helm mode: the webhook's TLS Secret and release, and the Load Balancer Controller's release."""

    def __init__(self, name: str, args: IdentityAddonsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("rke-aws:identity:IdentityAddons", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider)
        secret = identity_webhook.tls_secret("", "")
        tls_secret = k8s.core.v1.Secret(
            f"{name}-pod-identity-webhook-tls",
            metadata=k8s.meta.v1.ObjectMetaArgs(**secret["metadata"]), type=secret["type"],
            string_data={"tls.crt": args.certificate.cert_pem, "tls.key": args.certificate.key_pem}, opts=in_cluster)
        self.webhook = charts.release(identity_webhook.CHART.located(*args.chart_location), f"{name}-pod-identity-webhook", args.webhook_values,
                                      pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=[tls_secret]))
        names = ["amazon-eks-pod-identity-webhook"]
        if args.lbc_values is not None:
            # After the webhook: the controller's pods get their role's token from it.
            charts.release(identity_lbc.CHART.located(*args.chart_location), f"{name}-aws-load-balancer-controller", args.lbc_values,
                           pulumi.ResourceOptions(parent=self, provider=args.provider,
                                                  depends_on=[self.webhook, *args.lbc_depends_on]))
            names.append("aws-load-balancer-controller")
        self.names = tuple(names)
        self.register_outputs({})
