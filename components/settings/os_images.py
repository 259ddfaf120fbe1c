"""The operating systems a node pool may run (`os`), and what each needs at boot. Pure data and checks.

One row per OS: the image each vendor publishes per partition and CPU architecture (the owner
account and name pattern the plan looks the latest image up with, or None where the vendor
publishes none there), the login user, the package manager, how RKE2 is installed, what the boot
script must switch off or add, whether the SSM agent ships on the image, the OS's FIPS mode, and
whether RKE1 (Docker) runs there. Each fact says where it was read. `os_problems` is the one place
that says which combination of OS, distribution, partition, architecture, FIPS and air-gap is
refused, and why (without a config key: the caller names it).

Sources, read offline (pinned where a repository was mirrored):
- rke2 = rancher/rke2 @ 6ce1a8019e9d `install.sh`; rke2-docs = rancher/rke2-docs @ 9477b7b1df1f;
  rke2-selinux = rancher/rke2-selinux @ 63deede6123a `policy/*/rke2-selinux.spec`.
- kops = kubernetes/kops `upup/pkg/fi/cloudup/awsup/aws_cloud.go` (WellKnownAccount*) and
  `docs/operations/images.md`; tf-server = rancher/terraform-aws-server @ cacfcfc
  `modules/image/types.tf` (the image module behind SUSE's terraform-aws-rke2).
- ssm-docs = awsdocs/aws-systems-manager-user-guide `doc_source/ami-preinstalled-agent.md`,
  `agent-install-rhel.md`, `agent-install-rocky.md`, `agent-install-sles.md`.
- The research sheet for issue 35 (brief/research/35-airgap-os-fips.md) for the rest, each named below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from . import versions

PARTITIONS = ("aws", "aws-us-gov", "aws-cn")
ARCHITECTURES = ("x86_64", "arm64")  # EC2's names (DescribeInstanceTypes SupportedArchitectures)

PackageManager = Literal["apt", "dnf", "zypper", "transactional-update"]
# How RKE2 gets onto the node when it is downloaded at boot (online). Air-gapped nodes always use the
# tarball: install.sh picks `tar` whenever INSTALL_RKE2_ARTIFACT_PATH is set, whatever the OS (rke2
# install.sh setup_env: the rpm default applies only when ARTIFACT_PATH, COMMIT and METHOD are all unset).
InstallMethod = Literal["tar", "rpm"]
# The OS's FIPS mode: "switch": the boot script turns it on (`fips-mode-setup --enable`, then a reboot);
# "image": only a FIPS image the user brings (`ami`) runs in it; None: no FIPS mode usable here.
FipsMode = Literal["switch", "image"] | None
# Where an RKE1 node's Docker engine comes from: "install-docker": Rancher's install-docker script of
# versions.RKE_DOCKER_VERSION (Docker CE from download.docker.com); "os-package": the OS's own `docker`
# package (components/node/scripts/rke1_docker.sh), where that script does not install.
Rke1Docker = Literal["install-docker", "os-package"]


@dataclass(frozen=True)
class VendorImage:
    """Where a vendor publishes an OS in one partition: the publisher accounts and, per EC2
    architecture, the image name pattern (None: no image for that architecture)."""
    owners: tuple[str, ...]
    names: Mapping[str, str | None]
    source: str  # where the owner and pattern were read


@dataclass(frozen=True)
class OsImage:
    name: str  # the `os` value
    title: str
    # partition -> where the vendor publishes it; None: the vendor publishes no image there (refused
    # unless the pool brings its own `ami`)
    images: dict[str, VendorImage | None]
    login_user: str
    package_manager: PackageManager
    online_install: InstallMethod  # what RKE2's install.sh picks on this OS when it downloads
    # SELinux enforcing on the image, so RKE2 needs the rke2-selinux policy and `selinux: true`
    selinux: bool
    # rke2-selinux's build for this OS: the release suffix of rke2-selinux-<v>-<r>.<dist>.noarch.rpm
    # (rke2-selinux policy/*/rke2-selinux.spec Release lines) and the rpm.rancher.io path infix
    # install.sh uses for it (do_install_rpm). None when SELinux is not used.
    selinux_dist: str | None
    selinux_rpm_infix: str | None
    # the air-gapped rpm install must bring container-selinux too (the OS's own repositories are not
    # reachable without internet)
    offline_container_selinux: bool
    network_manager: bool  # NetworkManager manages the interfaces: RKE2's Canal keyfile applies
    nm_cloud_setup: bool  # the image may ship nm-cloud-setup.service/.timer (disabled at boot)
    firewalld: bool  # the image may run firewalld (stopped and disabled at boot)
    wicked: bool  # wicked manages the network and can revert forwarding (sysctl file written)
    ssm_agent_preinstalled: bool
    ssm_agent_unit: str
    fips: FipsMode
    fips_package: str | None  # the package that brings fips-mode-setup, when the image may lack it
    rke1: bool  # RKE1 (Docker) supported here
    rke1_docker: Rke1Docker = "install-docker"  # where RKE1's Docker comes from (when rke1)
    sources: dict[str, str] = field(default_factory=dict)

    def image(self, partition: str, arch: str) -> tuple[tuple[str, ...], str] | None:
        """(owners, name pattern) of the vendor's image for `arch` in `partition`, or None."""
        published = self.images.get(partition)
        if published is None:
            return None
        name = published.names.get(arch)
        return (published.owners, name) if name else None

    @property
    def transactional(self) -> bool:
        return self.package_manager == "transactional-update"


# --- Ubuntu 24.04 (today's default) -----------------------------------------------------------------
# Owners per partition: Canonical's "Find Ubuntu images on AWS" (canonical/ubuntu-cloud-docs
# aws/aws-how-to/instances/find-ubuntu-images.rst @ 0a454c90), as components/settings/partitions.py.
_UBUNTU = VendorImage(("099720109477",), dict(versions.UBUNTU_AMI_NAMES), "Canonical find-ubuntu-images.rst; kops aws_cloud.go")

UBUNTU = OsImage(
    name="ubuntu-24.04", title="Ubuntu 24.04 LTS",
    images={
        "aws": _UBUNTU,
        "aws-us-gov": VendorImage(("513442679011",), dict(versions.UBUNTU_AMI_NAMES), "Canonical find-ubuntu-images.rst"),
        "aws-cn": VendorImage(("837727238323",), dict(versions.UBUNTU_AMI_NAMES), "Canonical find-ubuntu-images.rst"),
    },
    login_user="ubuntu",
    package_manager="apt",
    online_install="tar",  # install.sh: no yum, no SLES 16 zypper -> tar
    selinux=False, selinux_dist=None, selinux_rpm_infix=None, offline_container_selinux=False,  # AppArmor
    network_manager=False, nm_cloud_setup=False, firewalld=False, wicked=False,  # netplan/systemd-networkd
    # ssm-docs ami-preinstalled-agent.md: Ubuntu Server images carry the agent as a snap; its unit name
    # is the snap's (same page, "Ubuntu Server (64-bit - Snap)"); components/node/scripts.py SSM_AGENT_UNIT.
    ssm_agent_preinstalled=True, ssm_agent_unit="snap.amazon-ssm-agent.amazon-ssm-agent.service",
    # FIPS modules only with Ubuntu Pro (`pro enable fips`) or a prebuilt "Ubuntu Pro FIPS" Marketplace
    # image (Canonical blog "FIPS 140-3 certified modules now available for Ubuntu 22.04 LTS", 2025-02-05;
    # 24.04's certification was still in progress): only a user's FIPS image.
    fips="image", fips_package=None,
    rke1=True,  # what the program runs today (Docker from Rancher's install-docker script)
)

# --- RHEL 9 ---------------------------------------------------------------------------------------------
# Commercial 309956199498: kops aws_cloud.go WellKnownAccountRedhat, tf-server types.tf rhel-9. GovCloud
# 219670896067: Red Hat KB 15356 as quoted by several repositories (e.g. "Red Hat GovCloud,
# https://access.redhat.com/solutions/15356"). China 841258680906: Red Hat's own cloudigrade settings
# (RHEL_IMAGES_AWS_ACCOUNTS "china"), aws/aws-parallelcluster tests utils.py RHEL_OWNERS, aws/eks-hybrid
# test/e2e/os/rhel.go. Name: tf-server types.tf ("RHEL-9.5.0_HVM-20241211-x86_64-0-Hourly2-GP3"); the
# arm64 images are named the same with arm64 (by analogy; not seen in a source).
_RHEL_NAMES = {"x86_64": "RHEL-9.*_HVM-*-x86_64-*-Hourly2-GP3", "arm64": "RHEL-9.*_HVM-*-arm64-*-Hourly2-GP3"}

RHEL9 = OsImage(
    name="rhel-9", title="Red Hat Enterprise Linux 9",
    images={
        "aws": VendorImage(("309956199498",), _RHEL_NAMES, "kops aws_cloud.go; tf-server types.tf rhel-9"),
        "aws-us-gov": VendorImage(("219670896067",), _RHEL_NAMES, "Red Hat KB 15356 (quoted by terraform modules)"),
        "aws-cn": VendorImage(("841258680906",), _RHEL_NAMES, "Red Hat cloudigrade settings; aws-parallelcluster RHEL_OWNERS"),
    },
    login_user="ec2-user",  # tf-server types.tf rhel-9 user
    package_manager="dnf",
    online_install="rpm",  # install.sh: `yum` exists -> rpm (rke2-selinux pulled in by rke2-common)
    # rke2-docs security/selinux.md: SELinux is supported by the rke2-selinux policy; an rpm install
    # enables it (its rke2-server.env sets RKE2_SELINUX=true), a tarball install needs `selinux: true`.
    selinux=True, selinux_dist="el9", selinux_rpm_infix="centos/9",
    # rke2-selinux.spec (centos9): Requires(post) container-selinux, which RHEL's base image lacks and
    # which comes from Red Hat's update servers (RHUI), not reachable air-gapped.
    offline_container_selinux=True,
    # rke2-docs known_issues.md: "In some operating systems like RHEL 8.4, NetworkManager includes two extra
    # services called nm-cloud-setup.service and nm-cloud-setup.timer ... if those services exist, they should
    # be disabled"; the Canal keyfile for NetworkManager; firewalld "should be disabled".
    network_manager=True, nm_cloud_setup=True, firewalld=True, wicked=False,
    # ssm-docs: RHEL is not in the preinstalled list; agent-install-rhel.md installs the rpm from
    # https://s3.<region>.amazonaws.com/amazon-ssm-<region>/latest/linux_<arch>/amazon-ssm-agent.rpm.
    ssm_agent_preinstalled=False, ssm_agent_unit="amazon-ssm-agent.service",
    # Red Hat "Security hardening" (RHEL 9) ch. 2: `fips-mode-setup --enable`, reboot; switching after the
    # installation "does not guarantee compliance" (keys made before are not FIPS-generated).
    fips="switch", fips_package=None,
    # RKE1 on RHEL 9.5 and Rocky 9.5 validated (rancher/rancher#48550); Docker CE, not podman-docker, and
    # an SSH user other than root (rke1-docs docs/os/os.md). Rancher's install-docker 27.5.1.sh installs
    # Docker CE here: its rhel|rocky branch adds download.docker.com's linux/rhel/docker-ce.repo and installs
    # docker-ce of that version with dnf (rancher/install-docker dist/27.5.1.sh @ d69b486; its tests run on
    # redhat/ubi9 and rockylinux 9, pkg/27.5.1/config.sh). docker-ce needs container-selinux from the OS's
    # own repositories (Docker's docker-ce.spec: Requires container-selinux >= 2.9). SELinux stays enforcing: Docker's daemon leaves its own SELinux labelling off unless
    # told (`selinux-enabled` unset: moby daemon/daemon_unix.go configureKernelSecuritySupport disables it, and
    # `docker info` then reports no selinux), and RKE's rancher-selinux check (rke_container_t, rancher/
    # rancher-selinux) runs only when it does (rancher/rke cluster/selinux.go RunSELinuxCheck, hosts/hosts.go
    # IsDockerSELinuxEnabled), so RKE1 needs no extra policy. firewalld and nm-cloud-setup off, as for RKE2 (rke1-docs docs/os/os.md, RHEL note).
    rke1=True, rke1_docker="install-docker",
)

# --- Rocky Linux 9 ---------------------------------------------------------------------------------------
# kops aws_cloud.go WellKnownAccountRockyLinux = 792107900819 and docs/operations/images.md
# ("Rocky-9-EC2-Base-9.*.*"; the names end in .x86_64 / .aarch64). No GovCloud or China publisher found
# (research sheet §5): refused there unless the pool brings its own image.
ROCKY9 = OsImage(
    name="rocky-9", title="Rocky Linux 9",
    images={
        "aws": VendorImage(("792107900819",), {"x86_64": "Rocky-9-EC2-Base-9.*.x86_64", "arm64": "Rocky-9-EC2-Base-9.*.aarch64"},
                           "kops aws_cloud.go WellKnownAccountRockyLinux; kops docs/operations/images.md"),
        "aws-us-gov": None,
        "aws-cn": None,
    },
    login_user="rocky",  # Rocky's own EC2 images (rancher/rancher#48550 validation table)
    package_manager="dnf",
    online_install="rpm",
    selinux=True, selinux_dist="el9", selinux_rpm_infix="centos/9", offline_container_selinux=True,
    network_manager=True, nm_cloud_setup=True, firewalld=True, wicked=False,  # as RHEL (known_issues.md)
    # ssm-docs agent-install-rocky.md: Rocky AMIs do not ship the agent; install the rpm.
    ssm_agent_preinstalled=False, ssm_agent_unit="amazon-ssm-agent.service",
    fips="switch", fips_package=None,  # RHEL's fips-mode-setup (bug-for-bug RHEL 9)
    rke1=True, rke1_docker="install-docker",  # rancher/rancher#48550; install-docker's rocky branch, as RHEL
)

# --- SLES 15 (newest service pack: SP7) --------------------------------------------------------------------
# SP7 is the newest SLES 15 service pack RKE2 was validated on (rancher/rke2#8479, closed, run with
# selinux: true; SLES 16 #8480 open). Publisher 013907871322 (tf-server types.tf sles-15, with the
# Marketplace account 679593333241). PAYG names suse-sles-15-sp7-v*-hvm-ssd-<arch> (SUSE's SSM parameter
# /aws/service/suse/sles/15-sp7/{x86_64,arm64}/latest in aws/eks-hybrid test/e2e/os/sles.go). No
# GovCloud publisher found; China 841869936221 only in third-party code: refused there (research §5).
SLES15 = OsImage(
    name="sles-15", title="SUSE Linux Enterprise Server 15 SP7",
    images={
        "aws": VendorImage(("013907871322",), {"x86_64": "suse-sles-15-sp7-v*-hvm-ssd-x86_64",
                                               "arm64": "suse-sles-15-sp7-v*-hvm-ssd-arm64"},
                           "tf-server types.tf sles-15; aws/eks-hybrid sles.go"),
        "aws-us-gov": None,
        "aws-cn": None,
    },
    login_user="ec2-user",  # tf-server types.tf sles-15 user
    package_manager="zypper",
    online_install="tar",  # install.sh: zypper picks rpm only on SLES 16 server (commit ec97fd418)
    # SLES 15 confines with AppArmor by default (SELinux only from SLES 16): no rke2-selinux.
    selinux=False, selinux_dist=None, selinux_rpm_infix=None, offline_container_selinux=False,
    # rke2-docs known_issues.md "Wicked": put net.ipv4.conf.all.forwarding=1 in /etc/sysctl.d/90-rke2.conf.
    network_manager=False, nm_cloud_setup=False, firewalld=True, wicked=True,
    # ssm-docs ami-preinstalled-agent.md: "SUSE Linux Enterprise Server (SLES) 12 and 15".
    ssm_agent_preinstalled=True, ssm_agent_unit="amazon-ssm-agent.service",
    # SLES has a FIPS mode, but this program does not switch it (not verified offline): a FIPS image only.
    fips="image", fips_package=None,
    # SLES 15 SP6 with RKE1 validated (rancher/rancher#46249, #47302, Docker 25); Docker from SUSE's
    # Containers module (rke1-docs docs/os/os.md: the package `docker`, in the Containers module, activated
    # with `SUSEConnect -p sle-module-containers/<version>/<arch>`). Rancher's install-docker does not install
    # here: its sles branch stops unless the machine is s390x ("Packages for SLES are currently only
    # available for s390x", rancher/install-docker dist/27.5.1.sh @ d69b486).
    rke1=True, rke1_docker="os-package",
)

# --- SLE Micro 6 -------------------------------------------------------------------------------------------
# SUSE publishes SLE Micro on AWS as BYOS only (SUSE blog "SLE-Micro in the Public Cloud", 2023: updates
# need an SCC registration; works air-gapped without updates, under SUSE's licence). tf-server types.tf
# sle-micro-61: owner 013907871322, user suse, name suse-sle-micro-6-1-byos-v*-hvm-ssd-x86_64. arm64 by
# analogy (not seen). Commercial only (research §5).
SLE_MICRO6 = OsImage(
    name="sle-micro-6", title="SUSE Linux Micro 6.1",
    images={
        "aws": VendorImage(("013907871322",), {"x86_64": "suse-sle-micro-6-1-byos-v*-hvm-ssd-x86_64",
                                               "arm64": "suse-sle-micro-6-1-byos-v*-hvm-ssd-arm64"},
                           "tf-server types.tf sle-micro-61"),
        "aws-us-gov": None,
        "aws-cn": None,
    },
    login_user="suse",
    # The root file system is read-only: packages go in with `transactional-update ... run zypper` and take
    # effect only after a reboot into the new snapshot (rke2-docs install/methods.md; install.sh wraps zypper
    # in `transactional-update --no-selfupdate -d run`).
    package_manager="transactional-update",
    # rke2-docs install/methods.md: SLE Micro defaults to the tarball; install.sh puts it under /opt/rke2
    # when /usr/local is read-only or a mount point. /opt and /usr/local are outside the snapshots (SLE
    # Micro admin guide), so the tarball install needs no transactional-update and no reboot.
    online_install="tar",
    # SELinux enforcing; rke2-selinux's SLE Micro build (Release .slemicro; rpm.rancher.io infix
    # `slemicro`, install.sh do_install_rpm). It is an rpm: transactional-update and a reboot before RKE2
    # starts (tarball installs do not enable SELinux, ADR 003: `selinux: true`).
    selinux=True, selinux_dist="slemicro", selinux_rpm_infix="slemicro", offline_container_selinux=False,
    network_manager=True, nm_cloud_setup=True, firewalld=True, wicked=False,
    # Not in ssm-docs' preinstalled list and not found for SLE Micro: installed as the rpm (in the same
    # transaction, active after the same reboot).
    ssm_agent_preinstalled=False, ssm_agent_unit="amazon-ssm-agent.service",
    # SUSE's fips-mode-setup refuses outside a transaction on read-only systems (SUSE:SLE-15-SP7:GA
    # crypto-policies-FIPS.patch); `transactional-update setup-fips` (openSUSE/transactional-update f45598b,
    # release 4.4.0) installs the fips pattern into a new snapshot and runs fips-mode-setup there, but the
    # pattern comes from SUSE's registered repositories (not reachable air-gapped, and not verified on SLE
    # Micro 6.1's images): only a FIPS image the user brings.
    fips="image", fips_package=None,
    rke1=False,  # no Docker in SLE Micro; no RKE1 validation found (research §6)
)

# --- Amazon Linux 2023 -------------------------------------------------------------------------------------
# Commercial 137112412989 (kops aws_cloud.go WellKnownAccountAmazonLinux2023, owner alias "amazon");
# GovCloud 045324592363 and China 141808717104 (awslabs/amazon-eks-ami Makefile source_ami_owners for
# us-gov-west-1 / cn-northwest-1). Names: aws-parallelcluster "al2023-ami-2023.*.*.*-kernel-6.1-*"; the
# standard image (kops supports the standard AMI only, not minimal).
_AL2023_NAMES = {"x86_64": "al2023-ami-2023.*-kernel-6.1-x86_64", "arm64": "al2023-ami-2023.*-kernel-6.1-arm64"}

AL2023 = OsImage(
    name="al2023", title="Amazon Linux 2023",
    images={
        "aws": VendorImage(("137112412989",), _AL2023_NAMES, "kops aws_cloud.go; kops docs/operations/images.md"),
        "aws-us-gov": VendorImage(("045324592363",), _AL2023_NAMES, "awslabs/amazon-eks-ami Makefile"),
        "aws-cn": VendorImage(("141808717104",), _AL2023_NAMES, "awslabs/amazon-eks-ami Makefile"),
    },
    login_user="ec2-user",
    package_manager="dnf",
    online_install="rpm",  # install.sh: yum exists -> rpm, repository centos/8 (VERSION_ID 2023 maps to 8)
    # rke2-selinux's el8 build (install.sh maps AL2023 to centos/8); validated with SELinux (rancher/rke2#6593).
    # AL2023's own repositories are S3 buckets reached through the S3 gateway endpoint (awstut "Configuration
    # for running yum/dnf on instance in private subnet"; verify on a real account): container-selinux
    # comes from there, not from the artifacts bucket.
    selinux=True, selinux_dist="el8", selinux_rpm_infix="centos/8", offline_container_selinux=False,
    network_manager=False, nm_cloud_setup=False, firewalld=False, wicked=False,  # systemd-networkd
    # AL2023 release notes list amazon-ssm-agent among the AMI's packages (relnotes-2023.10.20260330).
    ssm_agent_preinstalled=True, ssm_agent_unit="amazon-ssm-agent.service",
    # AWS "Enable FIPS Mode on AL2023" (docs.aws.amazon.com/linux/al2023/ug/fips-mode.html; its steps were
    # not readable offline): fips-mode-setup from crypto-policies-scripts, then a reboot.
    fips="switch", fips_package="crypto-policies-scripts",
    rke1=False,  # RKE1 on Amazon Linux: rancher/rancher#31645 still open, not validated (research §6)
)

OS_IMAGES: dict[str, OsImage] = {o.name: o for o in (UBUNTU, RHEL9, ROCKY9, SLES15, SLE_MICRO6, AL2023)}
DEFAULT_OS = UBUNTU.name  # what every pool ran before `os` existed


def _allowed(values: Iterable[str]) -> str:
    return ", ".join(values)


def os_problems(os: str, distribution: str, partition: str, arch: str, fips: bool, airgap: bool, *,
                custom_image: bool = False, preinstalled: bool = False) -> list[str]:
    """Why a pool may not run `os` here, as sentences without a config key (the caller adds it):
    [] when it may. `custom_image`: the pool brings its own `ami` (then the vendor's absence from a
    partition or architecture is not a problem, and a FIPS image is the user's word). `preinstalled`:
    `airgap.preinstalled`, the image already holds RKE2 (nothing is installed at boot)."""
    image = OS_IMAGES.get(os)
    if image is None:
        return [f"'{os}' is not an OS this program boots; allowed: {_allowed(OS_IMAGES)}"]
    out: list[str] = []
    if partition not in PARTITIONS:
        return [f"partition '{partition}' is not one of {_allowed(PARTITIONS)}"]
    if arch not in ARCHITECTURES:
        return [f"architecture '{arch}' is not one of {_allowed(ARCHITECTURES)}"]
    if not custom_image and image.image(partition, arch) is None:
        where = {"aws": "commercial regions", "aws-us-gov": "GovCloud", "aws-cn": "the China regions"}[partition]
        published = [p for p in PARTITIONS if image.image(p, arch) is not None]
        out.append(f"no {image.title} image for {arch} is published in {where} ({partition}) by a publisher "
                   f"this program knows"
                   + (f" (it is published in: {_allowed(published)})" if published else "")
                   + "; set the pool's `ami` to an image of your own, or choose another os")
    if distribution == "rke" and not image.rke1:
        out.append(f"RKE1 runs on Docker, which {image.title} does not support for RKE; RKE1 pools may run "
                   f"{_allowed(o.name for o in OS_IMAGES.values() if o.rke1)}")
    if fips:
        if distribution == "rke":
            out.append("fips is for RKE2 (its FIPS-validated build); RKE1 has none")
        if image.fips is None or (image.fips == "image" and not custom_image):
            out.append(f"{image.title} is not switched to FIPS mode by this program; run it from a FIPS image "
                       f"of your own (`ami`), or use {_allowed(o.name for o in OS_IMAGES.values() if o.fips == 'switch')}")
        if arch != "x86_64":
            # rke2-docs security/about_hardened_images.md: only linux/amd64 hardened images are FIPS-compliant.
            out.append("RKE2's FIPS claim covers linux/amd64 only (rke2-docs security/about_hardened_images.md); "
                       "use an x86_64 instance type")
    if airgap and distribution == "rke":
        out.append("air-gapped installs are for RKE2 (install.sh's INSTALL_RKE2_ARTIFACT_PATH); RKE1 needs Docker "
                   "from the internet")
    if airgap and preinstalled and not custom_image:
        out.append("airgap.preinstalled needs an image that already holds RKE2: set the pool's `ami`")
    return out


def login_user(os: str, ssh_user: str) -> str:
    """The user RKE1 logs in as (cluster.yml `user`) on a node of `os`: access.sshUser on Ubuntu (its
    default is Ubuntu's `ubuntu`), the vendor's image user on the others (the table's login_user)."""
    return ssh_user if os == DEFAULT_OS else OS_IMAGES[os].login_user


def rke2_config_keys(os: str, airgap: bool, preinstalled: bool = False) -> dict[str, bool]:
    """Keys the OS adds to RKE2's config.yaml: `selinux: true` on an SELinux OS whenever RKE2 is not
    installed from its rpm (which sets RKE2_SELINUX=true itself): always when air-gapped (tarball),
    on SLE Micro (tarball), and for a preinstalled image (how it was installed is unknown: the key
    is harmless with the rpm's env file). rke2-docs security/selinux.md."""
    image = OS_IMAGES[os]
    if not image.selinux:
        return {}
    if airgap or preinstalled or image.online_install == "tar":
        return {"selinux": True}
    return {}


def may_reboot_at_first_boot(os: str, fips: bool) -> bool:
    """Whether a node of this OS may reboot once during its first boot (and so needs the unit that
    resumes the bootstrap afterwards): packages installed with transactional-update take effect only
    in the next snapshot (SLE Micro installs the SELinux policy and the SSM agent), and FIPS mode
    switched on takes a reboot (fips-mode-setup). An image already in FIPS mode does not reboot."""
    image = OS_IMAGES[os]
    packages = image.transactional and (image.selinux or not image.ssm_agent_preinstalled)
    return packages or (fips and image.fips == "switch")
