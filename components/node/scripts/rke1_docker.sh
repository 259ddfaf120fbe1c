# shellcheck shell=sh
# An RKE1 node's Docker engine from its OS's own packages, where Rancher's install-docker script does not install
# (components/settings/os_images.py rke1_docker "os-package"); before rke.sh, after retry.sh and os_prep.sh.
# SLES: install-docker's sles branch stops on every machine but s390x (rancher/install-docker dist/27.5.1.sh
# @ d69b486); rke1-docs docs/os/os.md: SUSE's package is `docker`, in the Containers module, which
# `SUSEConnect -p sle-module-containers/<version>/<arch>` activates where it is not active yet.
# rke.sh then fetches DOCKER_INSTALL_URL, the file:// URL of DOCKER_INSTALLED, an installer written here that
# installs nothing (rke.sh's bytes, and so every Ubuntu node's user data, stay as they were).
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   ROOT OS_NAME DOCKER_PACKAGE DOCKER_MODULE DOCKER_INSTALLED
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

os_version() { sed -n 's/^VERSION_ID="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$ROOT/etc/os-release"; }

install_docker_package() {
  if zypper --non-interactive install "$DOCKER_PACKAGE"; then
    return 0
  fi
  log "no $DOCKER_PACKAGE package in $OS_NAME's repositories: activating $DOCKER_MODULE (rke1-docs docs/os/os.md)"
  SUSEConnect -p "$DOCKER_MODULE/$(os_version)/$(uname -m)" &&
    zypper --non-interactive install "$DOCKER_PACKAGE"
}

log "Docker from $OS_NAME's $DOCKER_PACKAGE package"
retry install_docker_package
printf '%s\n' '#!/bin/sh' "# rke-aws: Docker came from $OS_NAME's $DOCKER_PACKAGE package; nothing to install here" \
  > "$ROOT$DOCKER_INSTALLED"
