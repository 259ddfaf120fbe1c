"""Where the identity add-ons' images come from, per partition. Pure.

Both the pod identity webhook and the AWS Load Balancer Controller publish their images on
`public.ecr.aws` (aws/amazon-eks-pod-identity-webhook .github/workflows/build.yaml; aws/eks-charts
stable/aws-load-balancer-controller/values.yaml `image.repository`), which serves anonymous pulls,
so nodes need no registry credentials. EKS' own regional copies are private ECR registries that
need IAM authentication (EKS user guide, "View Amazon container image registries for Amazon EKS
add-ons": 602401143452.dkr.ecr.<region>.amazonaws.com, and in China 918309763551 (cn-north-1) and
961992271922 (cn-northwest-1) under amazonaws.com.cn); RKE/RKE2 nodes here have no ECR credential
helper. So commercial and GovCloud pull from public.ecr.aws (GovCloud instances with internet egress
reach it like any public registry; not verified on a GovCloud account from here), while in China,
where EKS itself pulls add-ons from registries inside the China regions, the image must be named
explicitly (a mirror the nodes can pull from).
"""

from __future__ import annotations

PUBLIC_ECR_PARTITIONS = frozenset({"aws", "aws-us-gov"})


def image_for(partition: str, default: str, override: str | None, key: str) -> tuple[str | None, str | None]:
    """(image, None), or (None, problem naming `key`) when the partition has no usable default."""
    if override:
        return override, None
    if partition in PUBLIC_ECR_PARTITIONS:
        return default, None
    return None, (f"rke-aws:{key} must name the image in partition {partition}: the default {default} is on "
                  "public.ecr.aws, which EKS does not use in the China regions, and EKS' China registries need "
                  "ECR credentials the nodes do not have; push the image to a registry the nodes can pull from")


def split_image(image: str) -> dict[str, str]:
    """`registry/repository:tag` as the charts' image.registry / image.repository / image.tag (a
    registry port stays in the registry)."""
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        raise ValueError(f"{image!r}: expected <registry>/<repository>:<tag>")
    registry, _, repository = name.partition("/")
    if not repository or not any(c in registry for c in ".:") and registry != "localhost":
        raise ValueError(f"{image!r}: the image must name its registry (e.g. public.ecr.aws/...)")
    return {"registry": registry, "repository": repository, "tag": tag}
