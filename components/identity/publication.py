"""The S3 bucket that serves the issuer's two documents to STS: exactly those two objects public,
nothing else readable or listable, ACLs off. Pure.

Sources (S3 user guide and API reference):
- New buckets have Object Ownership `BucketOwnerEnforced` (ACLs disabled) and all four Block Public
  Access settings on ("Controlling ownership of objects and disabling ACLs", "Blocking public access
  to your Amazon S3 storage"). kops' getting-started turns all four off and uses a public-read ACL;
  here ACLs stay disabled and a bucket policy grants the read.
- `BlockPublicPolicy` makes S3 reject a PutBucketPolicy whose policy is public; a policy granting
  `s3:GetObject` to `*` is public (PublicAccessBlockConfiguration, "The meaning of public").
  `RestrictPublicBuckets` limits a bucket with a public policy to AWS service principals and the
  owner's account, so anonymous readers (STS fetching the documents) would be refused. Both must be
  off on the bucket; `BlockPublicAcls` and `IgnorePublicAcls` stay on (no ACL grants anything).
- The account's own Block Public Access settings (and an organization's) apply on top of the
  bucket's: if either blocks public policies, this publication cannot work (a plan-time check).
- `aws:SecureTransport` (IAM condition keys): requests over plain HTTP are denied.
"""

from __future__ import annotations

from typing import Any

from .issuer import object_keys

CONTENT_TYPE = "application/json"
# Bucket owner enforced: ACLs disabled, every object the bucket owner's.
OBJECT_OWNERSHIP = "BucketOwnerEnforced"
# aws.s3.BucketPublicAccessBlock arguments: public policies allowed (the two objects), ACLs blocked.
PUBLIC_ACCESS_BLOCK = {
    "block_public_acls": True,
    "ignore_public_acls": True,
    "block_public_policy": False,
    "restrict_public_buckets": False,
}
# How long STS and other readers may cache the documents (Cache-Control): short, so a rotation's new
# JWKS is what they read soon after it is written. STS' own caching is not documented.
CACHE_CONTROL = "max-age=300"


def object_arns(bucket: str, partition: str, prefix: str = "") -> list[str]:
    return [f"arn:{partition}:s3:::{bucket}/{key}" for key in object_keys(prefix)]


def bucket_policy(bucket: str, partition: str, prefix: str = "") -> dict[str, Any]:
    """Anyone may GetObject the discovery document and the JWKS, over HTTPS; nothing else is granted
    (no ListBucket, no other key, no write), and plain HTTP is refused for everything."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "PublicIssuerDocuments", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
             "Resource": object_arns(bucket, partition, prefix)},
            {"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
             "Resource": [f"arn:{partition}:s3:::{bucket}", f"arn:{partition}:s3:::{bucket}/*"],
             "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
        ],
    }
