"""What the providers (not AWS's APIs) answer or refuse, and the facts the emulated account publishes.

Each written from its owner's source or documentation, never from the program: the AWS provider's region check
and its user-data limits (terraform-provider-aws), the shape of a route in the getRouteTable answer (the SDK wants
every field), a Rancher cluster's registration token (Rancher's import URL), the accounts Canonical publishes
Ubuntu from, and the images the account publishes under Canonical's naming.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import functools
import hashlib
import json
import math
import os
from pathlib import Path

ACCOUNT_ID = "123456789012"  # moto's default account

# The account Canonical publishes Ubuntu from in each partition (Canonical's "Find Ubuntu images on AWS",
# ownership verification), written out here, not taken from the program: a program that asks another owner
# finds no image, as in the partition itself.
CANONICAL_OWNERS = {"aws": "099720109477", "aws-us-gov": "513442679011", "aws-cn": "837727238323"}
# The Canonical images the account publishes (moto's built-in AMIs have no Ubuntu 24.04), named as Canonical
# names them (ubuntu/images/hvm-ssd-gp3/ubuntu-<series>-<version>-<deb arch>-server-<serial>; "Find Ubuntu images
# on AWS"), one serial each; EC2 calls the architectures x86_64 and arm64. tests/emulated/test_images.py holds the
# program's image filters to these names.
UBUNTU_SERIAL = "20250101"
UBUNTU_CREATED = _dt.datetime(2025, 1, 1, tzinfo=_dt.UTC)
UBUNTU_IMAGES = {  # EC2 architecture -> image name
    "x86_64": f"ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-{UBUNTU_SERIAL}",
    "arm64": f"ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-arm64-server-{UBUNTU_SERIAL}",
}
ROOT_DEVICE = "/dev/sda1"  # Ubuntu images' root device

# The other vendors' images (issue 35), one per vendor, partition and architecture where the vendor publishes
# one, under the vendor's own publisher account and naming, written out from the vendors' and their users'
# sources (not from the program; tests/emulated/test_images.py holds the program's filters to them). Where a
# vendor publishes nothing (Rocky, SUSE outside the commercial partition), the account has no image: a look-up
# there finds none, as in the partition itself.
# - RHEL: Red Hat's account 309956199498 (kubernetes/kops upup/pkg/fi/cloudup/awsup/aws_cloud.go
#   WellKnownAccountRedhat), GovCloud 219670896067 (Red Hat KB 15356), China 841258680906 (aws/eks-hybrid
#   test/e2e/os/rhel.go); names like RHEL-9.5.0_HVM-20241211-x86_64-0-Hourly2-GP3 (rancher/terraform-aws-server
#   modules/image/types.tf).
# - Rocky: 792107900819 (kops WellKnownAccountRockyLinux); Rocky-9-EC2-Base-9.<minor>-<date>.<n>.<x86_64|aarch64>
#   (kops docs/operations/images.md).
# - SUSE: 013907871322 (rancher/terraform-aws-server types.tf); suse-sles-15-sp7-v<date>-hvm-ssd-<arch> (SUSE's SSM
#   parameter /aws/service/suse/sles/15-sp7/<arch>/latest resolves to these, aws/eks-hybrid test/e2e/os/sles.go),
#   suse-sle-micro-6-1-byos-v<date>-hvm-ssd-<arch> (types.tf sle-micro-61).
# - Amazon Linux 2023: 137112412989 (kops WellKnownAccountAmazonLinux2023), GovCloud 045324592363 and China
#   141808717104 (awslabs/amazon-eks-ami Makefile); al2023-ami-2023.<ver>-kernel-6.1-<arch> (aws-parallelcluster).
_RHEL = {"x86_64": "RHEL-9.6.0_HVM-20250910-x86_64-0-Hourly2-GP3", "arm64": "RHEL-9.6.0_HVM-20250910-arm64-0-Hourly2-GP3"}
_AL2023 = {"x86_64": "al2023-ami-2023.8.20250818.0-kernel-6.1-x86_64",
           "arm64": "al2023-ami-2023.8.20250818.0-kernel-6.1-arm64"}
VENDOR_IMAGES: dict[str, dict[str, tuple[str, dict[str, str]]]] = {  # partition -> vendor -> (owner, arch -> name)
    "aws": {
        "redhat": ("309956199498", _RHEL),
        "rocky": ("792107900819", {"x86_64": "Rocky-9-EC2-Base-9.6-20250531.0.x86_64",
                                   "arm64": "Rocky-9-EC2-Base-9.6-20250531.0.aarch64"}),
        "suse-sles": ("013907871322", {"x86_64": "suse-sles-15-sp7-v20250701-hvm-ssd-x86_64",
                                       "arm64": "suse-sles-15-sp7-v20250701-hvm-ssd-arm64"}),
        "suse-sle-micro": ("013907871322", {"x86_64": "suse-sle-micro-6-1-byos-v20250210-hvm-ssd-x86_64",
                                            "arm64": "suse-sle-micro-6-1-byos-v20250210-hvm-ssd-arm64"}),
        "amazon": ("137112412989", _AL2023),
    },
    "aws-us-gov": {"redhat": ("219670896067", _RHEL), "amazon": ("045324592363", _AL2023)},
    "aws-cn": {"redhat": ("841258680906", _RHEL), "amazon": ("141808717104", _AL2023)},
}


def vendor_image_id(region: str, vendor: str, architecture: str) -> str:
    """The ID the account gives a vendor's image of `architecture` in `region` (stable per region)."""
    return "ami-" + hex_of(f"{vendor}:{region}:{architecture}", 17)


def vendor_images(partition: str) -> list[tuple[str, str, str, str]]:
    """(vendor, owner, architecture, name) of every vendor image published in `partition`."""
    return [(vendor, owner, arch, name) for vendor, (owner, names) in VENDOR_IMAGES.get(partition, {}).items()
            for arch, name in names.items()]


def hex_of(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def ubuntu_image_id(region: str, architecture: str) -> str:
    """The ID the account gives Canonical's image of `architecture` in `region` (stable per region)."""
    return "ami-" + hex_of(f"ubuntu:{region}" + ("" if architecture == "x86_64" else ":arm64"), 17)


def partition_of(region: str) -> str:
    """The partition a region belongs to (botocore's endpoints data: us-gov-* GovCloud, cn-* China)."""
    return "aws-us-gov" if region.startswith("us-gov-") else "aws-cn" if region.startswith("cn-") else "aws"


def dns_suffix(partition: str) -> str:
    return "amazonaws.com.cn" if partition == "aws-cn" else "amazonaws.com"


def known_regions() -> frozenset[str]:
    """Every region of every partition botocore knows (its bundled endpoints data, as moto's region table
    lists them)."""
    from rke_aws_offline.engine.emulated import moto_import

    moto_import.load()
    from moto.ec2.models.availability_zones_and_regions import RegionsAndZonesBackend

    return frozenset(r.name for r in RegionsAndZonesBackend.regions)


def region_refusal(region: str) -> str | None:
    """What the AWS provider answers every call with when configured for a region that does not exist (its
    region validation, before any API call), or None."""
    return None if region in known_regions() else f"configuring the AWS provider: invalid AWS Region: {region}"


ROUTE_KEYS = ("carrierGatewayId", "cidrBlock", "coreNetworkArn", "destinationPrefixListId", "egressOnlyGatewayId",
              "gatewayId", "instanceId", "ipv6CidrBlock", "localGatewayId", "natGatewayId", "networkInterfaceId",
              "odbNetworkArn", "transitGatewayId", "vpcEndpointId", "vpcPeeringConnectionId")


def route_result(**given: str) -> dict[str, str]:
    """One route of the getRouteTable answer (the SDK wants every field present)."""
    return {k: given.get(k, "") for k in ROUTE_KEYS}


# EC2 RunInstances: "User data is limited to 16 KB, in raw form, before it is base64-encoded".
EC2_USER_DATA_LIMIT = 16 * 1024


def user_data_refusal(name: str, inputs: dict) -> str | None:
    """What the provider or EC2 answers an instance's user data with, or None: both inputs at once
    (ConflictsWith), `userData` over 16,384 characters (the provider's StringLenBetween), base64 that is not
    base64, or a raw payload over EC2's limit (terraform-provider-aws internal/service/ec2/ec2_instance.go; EC2
    API reference, RunInstances)."""
    text, encoded = inputs.get("userData"), inputs.get("userDataBase64")
    if text and encoded:
        return f"instance {name}: \"user_data\": conflicts with user_data_base64"
    if isinstance(text, str) and len(text) > EC2_USER_DATA_LIMIT:
        return f"instance {name}: expected length of user_data to be in the range (0 - {EC2_USER_DATA_LIMIT})"
    raw = text.encode() if isinstance(text, str) else b""
    if isinstance(encoded, str):
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return f"instance {name}: user_data_base64: must be base64-encoded"
    if len(raw) > EC2_USER_DATA_LIMIT:
        return (f"InvalidParameterValue: instance {name}: User data is limited to {EC2_USER_DATA_LIMIT} bytes "
                f"({len(raw)} given)")
    return None


def rancher_cluster_answer(seed: str) -> tuple[str, dict]:
    """A rancher2 Cluster as the provider answers: ID c-<5 chars> and the registration token (Rancher's
    manifest address is <server>/v3/import/<token>_<cluster ID>.yaml; the server here is a placeholder)."""
    cid = "c-" + hex_of(seed, 5)
    token = hex_of(seed + "token", 54)
    url = f"https://rancher.offline.invalid/v3/import/{token}_{cid}.yaml"
    return cid, {"clusterRegistrationToken": {"clusterId": cid, "token": token, "manifestUrl": url,
                                              "command": f"kubectl apply -f {url}",
                                              "insecureCommand": f"curl --insecure -sfL {url} | kubectl apply -f -"},
                 "driver": "imported"}


# ---- pulumi-tls (hashicorp/terraform-provider-tls internal/provider/resource_private_key.go) ----------------
#
# A PrivateKey answers `private_key_pem` (PKCS#1 "RSA PRIVATE KEY" for RSA), `private_key_pem_pkcs8`,
# `public_key_pem` (PKIX "PUBLIC KEY") and `public_key_openssh`; the offline runs need the same answer for
# the same resource in every run (golden plans record what is derived from it), so the key is drawn from a
# seeded generator: real RSA numbers, never a secure key.

_KEYS: dict[tuple[str, int], dict[str, str]] = {}
# A directory other processes of the same test run share (share_keys): a key one of them generated is read there,
# not searched for again (~0.5 s of CPU for a 2048-bit key, the same for the same seed in every process). Handed to
# child interpreters (the CLI, `make diff`'s checkouts, a nested pytest run) through KEYS_ENV.
KEYS_ENV = "RKE_AWS_OFFLINE_TLS_KEYS"
_SHARED: Path | None = Path(os.environ[KEYS_ENV]) if os.environ.get(KEYS_ENV) else None


def share_keys(directory: Path | None) -> None:
    """Read and keep generated keys in `directory` too, in this process and the interpreters it starts
    (None: this process only)."""
    global _SHARED
    _SHARED = directory
    if directory is None:
        os.environ.pop(KEYS_ENV, None)
        return
    directory.mkdir(parents=True, exist_ok=True)
    os.environ[KEYS_ENV] = str(directory)


def _shared_key(seed: str, bits: int) -> Path | None:
    if _SHARED is None:
        return None
    return _SHARED / (hashlib.sha256(f"{bits}:{seed}".encode()).hexdigest()[:40] + ".json")


# The search's definition: draw `bits` random bits (top two and lowest set), skip a number that one of SMALL_PRIMES
# divides, then run MR_ROUNDS Miller-Rabin rounds, each with a base drawn from the same generator; the first number
# no round finds composite is the prime. The keys are a function of the seed through this definition (golden plans
# record keys derived from it: tests/snapshots/rke*-irsa.json). Two shortcuts keep every draw and every verdict:
# - a number with a factor below SIEVE_LIMIT (one gcd with the primes' product) is judged modulo that factor
#   first: a base that is no strong liar modulo a divisor of n is none modulo n, so such a round is decided
#   without the power modulo n; only a base that might lie is raised modulo n, as the definition does;
# - a number with no such factor that passes EXACT_ROUNDS rounds is taken as prime: its remaining bases are drawn
#   but not raised. The definition's verdict differs only for a composite that passes EXACT_ROUNDS rounds with
#   random bases: for the 1024-bit primes of the 2048-bit keys the program asks for (identity_issuer.MIN_RSA_BITS,
#   the webhook's keys), below 2**-80 per number tried; weaker for small numbers (about 2**-37 at 256 bits)
#   (Damgard, Landrock and Pomerance, "Average case error estimates for the strong probable prime test", Math.
#   Comp. 61, 1993).
# tests/emulated/test_emulated_account.py holds the search to the definition, written out there on its own.
SMALL_PRIMES = (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47)
MR_ROUNDS = 24
SIEVE_LIMIT = 1 << 16  # one gcd with the product of the primes up to here costs ~1/20 of a 1024-bit power
EXACT_ROUNDS = 3


@functools.cache
def _sieve_product() -> int:
    """The product of the primes above SMALL_PRIMES and below SIEVE_LIMIT."""
    composite = bytearray(SIEVE_LIMIT)
    product = 1
    for i in range(2, SIEVE_LIMIT):
        if not composite[i]:
            composite[i * i::i] = b"\x01" * len(range(i * i, SIEVE_LIMIT, i))
            if i > SMALL_PRIMES[-1]:
                product *= i
    return product


def _may_lie(base: int, d: int, r: int, modulus: int) -> bool:
    """One Miller-Rabin round for n (n - 1 = d * 2**r) computed modulo `modulus`: with modulus n, whether `base` fails
    to show n composite; with a divisor of n, whether it could (a strong liar's powers are 1 or -1 modulo n, so
    modulo every divisor of n too)."""
    x = pow(base, d, modulus)
    if x in (1, modulus - 1):
        return True
    for _ in range(r - 1):
        x = x * x % modulus
        if x == modulus - 1:
            return True
    return False


def _probable_prime(rng, bits: int) -> int:
    while True:
        n = rng.getrandbits(bits) | (1 << (bits - 1)) | (1 << (bits - 2)) | 1
        if any(n % p == 0 for p in SMALL_PRIMES):
            continue
        d, r = n - 1, 0
        while d % 2 == 0:
            d, r = d // 2, r + 1
        divisor = math.gcd(n, _sieve_product())
        known_composite = 1 < divisor < n
        for round_ in range(MR_ROUNDS):
            base = rng.randrange(2, n - 2)
            if known_composite and not _may_lie(base, d, r, divisor):
                break
            if not known_composite and round_ >= EXACT_ROUNDS:
                continue
            if not _may_lie(base, d, r, n):
                break
        else:
            return n


def tls_private_key(seed: str, bits: int = 2048) -> dict[str, str]:
    """What pulumi-tls answers for an RSA PrivateKey, the same for the same seed."""
    import random

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    if (seed, bits) in _KEYS:
        return _KEYS[(seed, bits)]
    stored = _shared_key(seed, bits)
    if stored is not None and stored.exists():
        _KEYS[(seed, bits)] = json.loads(stored.read_text())
        return _KEYS[(seed, bits)]
    rng = random.Random(f"tls:{seed}")  # noqa: S311 - deterministic on purpose (module comment)
    e = 65537
    while True:
        p, q = _probable_prime(rng, bits // 2), _probable_prime(rng, bits // 2)
        phi = (p - 1) * (q - 1)
        if p != q and phi % e and (p * q).bit_length() == bits:
            break
    d = pow(e, -1, phi)
    key = rsa.RSAPrivateNumbers(p, q, d, d % (p - 1), d % (q - 1), pow(q, -1, p),
                                rsa.RSAPublicNumbers(e, p * q)).private_key(
        unsafe_skip_rsa_key_validation=True)  # RSA numbers the search just made: OpenSSL need not test p and q again
    answer = {
        "privateKeyPem": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()).decode(),
        "privateKeyPemPkcs8": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()).decode(),
        "publicKeyPem": key.public_key().public_bytes(serialization.Encoding.PEM,
                                                      serialization.PublicFormat.SubjectPublicKeyInfo).decode(),
        "publicKeyOpenssh": key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                                          serialization.PublicFormat.OpenSSH).decode() + "\n",
    }
    _KEYS[(seed, bits)] = answer
    if stored is not None:  # whole or not at all: two processes may write the same key, never half of one
        tmp = stored.with_name(f"{stored.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(answer))
        os.replace(tmp, stored)
    return answer


# Certificates as terraform-provider-tls makes them (internal/provider/resource_self_signed_cert.go,
# resource_cert_request.go, resource_locally_signed_cert.go): a self-signed certificate from the given key, a
# PEM CSR, a certificate the CA key signs for the request's subject and DNS names. Fixed dates and serials (the
# golden plans), real signatures.
_NOT_BEFORE = (2026, 1, 1)


def _subject(subject: dict | None):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    cn = (subject or {}).get("commonName") or "offline"
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _certificate(seed: str, subject, issuer, public_key, signing_key, hours: int, ca: bool, dns_names) -> str:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization

    start = datetime.datetime(*_NOT_BEFORE, tzinfo=datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
               .serial_number(int(hashlib.sha256(seed.encode()).hexdigest()[:30], 16))
               .not_valid_before(start).not_valid_after(start + datetime.timedelta(hours=hours))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if dns_names:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in dns_names]), critical=False)
    return builder.sign(signing_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


_SECRET_SIG = "4dabf18193072939515e22adb298388d"  # Pulumi's marker of a secret value in a property map


def _plain(value):
    """A value as the provider sees it: a secret's content (pulumi-tls marks private keys secret outputs)."""
    if isinstance(value, dict) and _SECRET_SIG in value:
        return _plain(value.get("value"))
    return value


def tls_self_signed_cert(seed: str, inputs: dict) -> dict[str, str]:
    from cryptography.hazmat.primitives import serialization

    inputs = {k: _plain(v) for k, v in inputs.items()}

    key = serialization.load_pem_private_key(str(inputs["privateKeyPem"]).encode(), None)
    name = _subject(inputs.get("subject"))
    pem = _certificate(seed, name, name, key.public_key(), key, int(inputs.get("validityPeriodHours", 24)),
                       bool(inputs.get("isCaCertificate")), inputs.get("dnsNames"))
    return {"certPem": pem}


def tls_cert_request(seed: str, inputs: dict) -> dict[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization

    inputs = {k: _plain(v) for k, v in inputs.items()}

    key = serialization.load_pem_private_key(str(inputs["privateKeyPem"]).encode(), None)
    builder = x509.CertificateSigningRequestBuilder().subject_name(_subject(inputs.get("subject")))
    if inputs.get("dnsNames"):
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName(n) for n in inputs["dnsNames"]]), critical=False)
    return {"certRequestPem": builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()}


def tls_locally_signed_cert(seed: str, inputs: dict) -> dict[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    inputs = {k: _plain(v) for k, v in inputs.items()}

    csr = x509.load_pem_x509_csr(str(inputs["certRequestPem"]).encode())
    ca = x509.load_pem_x509_certificate(str(inputs["caCertPem"]).encode())
    ca_key = serialization.load_pem_private_key(str(inputs["caPrivateKeyPem"]).encode(), None)
    try:
        names = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        names = []
    pem = _certificate(seed, csr.subject, ca.subject, csr.public_key(), ca_key,
                       int(inputs.get("validityPeriodHours", 24)), bool(inputs.get("isCaCertificate")), names)
    return {"certPem": pem, "caKeyAlgorithm": "RSA"}
