# shellcheck shell=sh
# An RKE1 node's bootstrap; after retry.sh.
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   ROOT WORK NODE_NAME DOCKER_VERSION DOCKER_INSTALL_URL KERNEL_MODULES SSH_USER DOCKER_PROXY
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

log "bootstrap of $NODE_NAME (RKE1 node, Docker $DOCKER_VERSION)"
for module in $KERNEL_MODULES; do modprobe "$module"; done
sysctl --system >/dev/null
retry download "$DOCKER_INSTALL_URL" "$ROOT$WORK/install-docker.sh"
retry sh "$ROOT$WORK/install-docker.sh"
usermod -aG docker "$SSH_USER"
if [ "$DOCKER_PROXY" = yes ]; then
  systemctl daemon-reload
  systemctl restart docker
fi
systemctl enable --now docker
log "bootstrap done"
