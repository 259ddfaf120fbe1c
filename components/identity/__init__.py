"""Workload identity (IAM roles for service accounts, issue 36): the pure core.

Everything here is a plain function of plain values (PEM text, URLs, names, partitions), so the
settings and plan layers can call it however they are shaped:

- issuer.py      the service-account issuer: JWK/JWKS, the OpenID discovery document, the issuer URL
                 (S3-hosted per partition, or bring-your-own) and its validation;
- publication.py the S3 bucket that serves the two documents: its policy and public-access settings;
- apiserver.py   kube-apiserver arguments (RKE2 `kube-apiserver-arg`, RKE1 `services.kube-api`), the
                 key files on servers, and the signing-key rotation phases;
- roles.py       IRSA trust policies, service-account name rules, the `*`-on-`*` policy check;
- webhook.py     amazon-eks-pod-identity-webhook's chart values and serving certificate names;
- ebs_csi.py     the EBS CSI controller on a role, and the ordered move off its access key;
- lbc.py         the AWS Load Balancer Controller: its upstream IAM policy (vendored in upstream/),
                 scoped to the cluster, and its chart values.
"""
