# shellcheck shell=sh
# A node whose image already holds RKE2 (`airgap.preinstalled`; the rke2-aws-tf and Rancher Government
# way) installs nothing: this checks that the image holds the RKE2 this cluster runs, its unit for this
# node's kind and, on an SELinux OS, RKE2's policy, then makes rke2.sh's install step a no-op: the install
# script it "downloads" (INSTALL_SCRIPT_URL, a file:// URL) is written here and does nothing.
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   ROOT WORK KIND INSTALL_VERSION SELINUX_POLICY
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

found=no
for unit_dir in /etc/systemd/system /usr/local/lib/systemd/system /usr/lib/systemd/system; do
  if [ -f "$ROOT$unit_dir/rke2-$KIND.service" ]; then
    found=yes
  fi
done
if [ "$found" = no ]; then
  log "the image holds no rke2-$KIND.service (airgap.preinstalled): bake RKE2 $INSTALL_VERSION into it"
  exit 1
fi
rke2_bin=$(command -v rke2 || echo /opt/rke2/bin/rke2)  # /opt/rke2 where /usr/local is read-only (SLE Micro)
have=$("$rke2_bin" --version 2>/dev/null | sed -n 's/^rke2 version \([^ ]*\).*/\1/p')
if [ "$have" != "$INSTALL_VERSION" ]; then
  log "the image holds RKE2 ${have:-(none)}, this cluster runs $INSTALL_VERSION (airgap.preinstalled)"
  exit 1
fi
if [ "$SELINUX_POLICY" = yes ] && ! rpm -q --quiet rke2-selinux; then
  log "the image lacks rke2-selinux, RKE2's SELinux policy (rke2-docs security/selinux.md)"
  exit 1
fi
log "RKE2 $INSTALL_VERSION is preinstalled on the image"
mkdir -p "$ROOT$WORK"
printf '#!/bin/sh\n# RKE2 is preinstalled on this image (rke-aws: airgap.preinstalled)\nexit 0\n' > "$ROOT$WORK/preinstalled.sh"
