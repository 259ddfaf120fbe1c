# shellcheck shell=sh
# An RKE2 node's OS preparation (before rke2.sh; after retry.sh, ssm.sh and, when air-gapped, s3.sh): what
# components/node/os_images.py says the node's OS needs before RKE2 is installed (also an RKE1 node's, before
# rke.sh installs Docker: components/node/scripts.py rke1_node_steps; no FIPS, air-gap or reboot there):
# - NetworkManager told to leave Canal's interfaces alone, nm-cloud-setup and firewalld switched off, the
#   forwarding sysctls written where wicked would revert them (rke2-docs known_issues.md);
# - RKE2's SELinux policy (rke2-selinux) with what it needs, from the artifacts bucket when air-gapped
#   (rke2-docs install/airgap.md "SELinux"), or from Rancher's repository on SLE Micro online;
# - the SSM agent where the image lacks it (AWS Systems Manager User Guide, agent-install-rhel.md: the rpm
#   from the region's amazon-ssm-<region> bucket, reached through the S3 gateway endpoint when air-gapped);
# - FIPS mode (`fips-mode-setup --enable` and a reboot: Red Hat "Security hardening", RHEL 9 ch. 2), or a
#   check that the image runs in it;
# - a default route when the node has none (rke2-docs install/airgap.md "Default Network Route").
# Packages installed with transactional-update (SLE Micro) and FIPS mode take effect after a reboot: the
# node then enables rke-aws-bootstrap.service, marks itself prepared and reboots; after the reboot that
# unit runs this script again, which skips what is done and goes on. Files in /etc are written before
# transactional-update takes its snapshot (changes made after it stay visible too, through /etc's overlay).
# transactional-update (openSUSE/transactional-update @ aee1e1b): a command `run` in the new snapshot does
# not see /var (lib/Transaction.cpp mounts only some of its subdirectories, and the BINDDIRS of tukit.conf,
# by default /opt), so the rpms wait in RPM_DIR under /opt there; and a second call before the reboot
# starts again from the running system unless it says --continue (doc/transactional-update.xml, "Workflow").
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   ROOT WORK OS_NAME BOOTSTRAP PKG ARTIFACTS_BUCKET RPM_PREFIX RPM_DIR DNF_REPOS SELINUX_REPO SSM_AGENT_RPM_URL
#   SSM_AGENT_UNIT NM_KEYFILE NM_CLOUD_SETUP FIREWALLD FORWARDING FIPS FIPS_PACKAGE DEFAULT_ROUTE MAY_REBOOT
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

fips_enabled() { [ "$(cat "$ROOT/proc/sys/crypto/fips_enabled" 2>/dev/null)" = 1 ]; }

has_unit() { systemctl cat "$1" >/dev/null 2>&1; }

install_rpms() {  # install_rpms DIR: every rpm in DIR with the OS's package manager, its signing keys (*.key) first
  case "$PKG" in
    dnf|zypper)
      for key in "$1"/*.key; do
        if [ -f "$key" ]; then
          rpm --import "$key"
        fi
      done
      if [ "$PKG" = zypper ]; then
        zypper --non-interactive install "$1"/*.rpm
      elif [ "$DNF_REPOS" = none ]; then  # air-gapped: the OS's repositories are out of reach
        dnf install -y --disablerepo='*' "$1"/*.rpm
      else
        dnf install -y "$1"/*.rpm
      fi ;;
    transactional-update)
      # The rpm database is read-only outside a transaction: keys and packages go into the new snapshot.
      # shellcheck disable=SC2016 # "$1" is the inner shell's
      transactional-update --no-selfupdate -d --continue run sh -c 'for key in "$1"/*.key; do
  if [ -f "$key" ]; then rpm --import "$key" || exit 1; fi
done
zypper --non-interactive install "$1"/*.rpm' sh "$1" ;;
    *) log "no rpm installs with $PKG"; return 1 ;;
  esac
}

fetch_ssm_agent() {  # the agent's rpm from AWS's bucket in this region (public; no signature)
  curl --fail --silent --show-error --location --connect-timeout 10 --max-time 600 \
    -o "$ROOT$RPM_DIR/amazon-ssm-agent.rpm.part" "$SSM_AGENT_RPM_URL" &&
    mv "$ROOT$RPM_DIR/amazon-ssm-agent.rpm.part" "$ROOT$RPM_DIR/amazon-ssm-agent.rpm"
}

fetch_rpms() {  # every rpm and signing key under RPM_PREFIX in the artifacts bucket into RPM_DIR
  keys=$(s3_list "$ARTIFACTS_BUCKET" "$RPM_PREFIX") || return 1
  found=no
  for key in $keys; do
    case "$key" in
      *.rpm|*.key)
        s3_get "$ARTIFACTS_BUCKET" "$key" "$ROOT$RPM_DIR/${key##*/}" || return 1
        found=yes ;;
    esac
  done
  [ "$found" = yes ] || { log "no rpm under s3://$ARTIFACTS_BUCKET/$RPM_PREFIX"; return 1; }
}

if [ -f "$ROOT$WORK/prepared" ]; then
  # After the preparation's reboot: run once, never again on later reboots.
  mv "$ROOT$WORK/prepared" "$ROOT$WORK/resumed"
  systemctl disable rke-aws-bootstrap.service || true
  log "resumed after the reboot the preparation of $OS_NAME needed"
  if [ "$FIPS" = switch ]; then
    if ! fips_enabled; then
      log "FIPS mode is still off after the reboot (fips-mode-setup --check: $(fips-mode-setup --check 2>&1 || true))"
      exit 1
    fi
    # Keys made before the switch were not made in FIPS mode (Red Hat: switching after installation
    # "does not guarantee compliance"): the SSH host keys cloud-init generated at first boot are made again.
    rm -f "$ROOT"/etc/ssh/ssh_host_*key*
    ssh-keygen -A
    systemctl restart sshd.service || log "sshd did not restart with its new host keys"
  fi
  if [ -n "$SSM_AGENT_RPM_URL" ] && has_unit "$SSM_AGENT_UNIT"; then
    systemctl enable --now "$SSM_AGENT_UNIT"  # installed in the snapshot this boot started from
  fi
elif [ ! -f "$ROOT$WORK/resumed" ]; then
  log "preparing $OS_NAME"
  reboot=no
  if [ "$MAY_REBOOT" = yes ]; then
    # Written and enabled before any snapshot is taken (see above); runs only while `prepared` exists.
    mkdir -p "$ROOT/etc/systemd/system"
    printf '%s\n' '[Unit]' 'Description=rke-aws: finish the node bootstrap after the reboot its preparation needed' \
      'Wants=network-online.target' 'After=network-online.target cloud-final.service' \
      "ConditionPathExists=$WORK/prepared" '' '[Service]' 'Type=oneshot' "ExecStart=$BOOTSTRAP" '' \
      '[Install]' 'WantedBy=multi-user.target' > "$ROOT/etc/systemd/system/rke-aws-bootstrap.service"
    systemctl daemon-reload
    systemctl enable rke-aws-bootstrap.service
  fi
  if [ "$NM_KEYFILE" = yes ]; then
    mkdir -p "$ROOT/etc/NetworkManager/conf.d"
    printf '%s\n' '[keyfile]' \
      'unmanaged-devices=interface-name:flannel*;interface-name:cali*;interface-name:tunl*;interface-name:vxlan.calico;interface-name:vxlan-v6.calico;interface-name:wireguard.cali;interface-name:wg-v6.cali' \
      > "$ROOT/etc/NetworkManager/conf.d/rke2-canal.conf"
    systemctl reload NetworkManager.service || log "NetworkManager did not reload rke2-canal.conf"
  fi
  if [ "$FORWARDING" = yes ]; then
    mkdir -p "$ROOT/etc/sysctl.d"
    printf '%s\n' 'net.ipv4.conf.all.forwarding=1' 'net.ipv6.conf.all.forwarding=1' > "$ROOT/etc/sysctl.d/90-rke2.conf"
  fi
  if [ "$NM_CLOUD_SETUP" = yes ]; then
    for unit in nm-cloud-setup.timer nm-cloud-setup.service; do
      if has_unit "$unit"; then
        systemctl disable --now "$unit"
        log "disabled $unit (its routing table breaks the CNI: rke2-docs known_issues.md)"
      fi
    done
  fi
  if [ "$FIREWALLD" = yes ] && has_unit firewalld.service; then
    systemctl disable --now firewalld.service
    log "disabled firewalld (it conflicts with Canal: rke2-docs known_issues.md)"
  fi

  mkdir -p "$ROOT$RPM_DIR"
  if [ -n "$RPM_PREFIX" ]; then
    retry fetch_rpms
  fi
  if [ -n "$SSM_AGENT_RPM_URL" ] && ! has_unit "$SSM_AGENT_UNIT"; then
    retry fetch_ssm_agent
  fi
  set -- "$ROOT$RPM_DIR"/*.rpm
  if [ -f "$1" ]; then
    retry install_rpms "$ROOT$RPM_DIR"
    if [ "$PKG" = transactional-update ]; then
      reboot=yes
    fi
  fi
  if [ -n "$SELINUX_REPO" ]; then
    # Online SLE Micro: RKE2's policy from Rancher's repository (install.sh do_install_rpm's repository).
    # shellcheck disable=SC2016 # "$1" is the inner shell's
    retry transactional-update --no-selfupdate -d --continue run sh -c 'zypper --non-interactive --gpg-auto-import-keys addrepo --check "$1" rancher-rke2-common && zypper --non-interactive --gpg-auto-import-keys install rke2-selinux' \
      sh "$SELINUX_REPO"
    reboot=yes
  fi
  if [ -n "$SSM_AGENT_RPM_URL" ] && [ "$PKG" != transactional-update ] && has_unit "$SSM_AGENT_UNIT"; then
    systemctl enable --now "$SSM_AGENT_UNIT"
  fi

  case "$FIPS" in
    switch)
      if fips_enabled; then
        log "FIPS mode already on"
      else
        if [ -n "$FIPS_PACKAGE" ] && ! command -v fips-mode-setup >/dev/null 2>&1; then
          retry dnf install -y "$FIPS_PACKAGE"
        fi
        fips-mode-setup --enable
        reboot=yes
      fi ;;
    check)
      if ! fips_enabled; then
        log "fips: the image does not run in FIPS mode (/proc/sys/crypto/fips_enabled is not 1); use a FIPS image"
        exit 1
      fi ;;
  esac

  if [ "$reboot" = yes ]; then
    touch "$ROOT$WORK/prepared"
    log "rebooting to finish the preparation of $OS_NAME; rke-aws-bootstrap.service goes on afterwards"
    systemctl reboot
    exit 0
  fi
fi

if [ "$DEFAULT_ROUTE" = yes ] && [ -z "$(ip route show default)" ]; then
  # RKE2 finds the node's primary IP and routes ClusterIPs by the default route, which must exist before
  # it starts: a black-hole route on a dummy interface does (rke2-docs install/airgap.md), kept by a unit.
  log "no default route: adding a black-hole one on dummy0 (rke2-docs install/airgap.md)"
  mkdir -p "$ROOT/etc/systemd/system"
  printf '%s\n' '[Unit]' 'Description=rke-aws: a default route for RKE2 on a node that has none' \
    'Before=rke2-server.service rke2-agent.service' '' '[Service]' 'Type=oneshot' 'RemainAfterExit=yes' \
    'ExecStart=-/sbin/ip link add dummy0 type dummy' 'ExecStart=/sbin/ip link set dummy0 up' \
    'ExecStart=-/sbin/ip addr add 203.0.113.254/31 dev dummy0' \
    'ExecStart=-/sbin/ip route add default via 203.0.113.255 dev dummy0 metric 1000' '' \
    '[Install]' 'WantedBy=multi-user.target' > "$ROOT/etc/systemd/system/rke-aws-default-route.service"
  systemctl daemon-reload
  systemctl enable --now rke-aws-default-route.service
fi
