# shellcheck shell=sh
# An RKE2 node's bootstrap (rke-aws-bootstrap); after retry.sh and ssm.sh.
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   ROOT WORK NODE_NAME KIND INSTALL_VERSION INSTALL_SCRIPT_URL CONFIG ENDPOINT SUPERVISOR_PORT API_PORT
#   PEER_IPS INITIALISER TOKEN_REQUEST TOKEN_FILE AGENT_TOKEN_REQUEST AGENT_TOKEN_FILE MARKER_REQUEST
#   MARKER_PARAMETER ADMIN_KUBECONFIG KUBECONFIG_PARAMETER KUBECONFIG_KEY MANIFEST_PATH SYNC CIS CIS_SYSCTL_SOURCES
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

write_join_address() {
  printf 'server: https://%s:%s\n' "$ENDPOINT" "$SUPERVISOR_PORT" >> "$ROOT$CONFIG"
}

marker_state() {  # the init marker's value: "pending" until the first server has initialised the cluster
  reply=$(ssm GetParameter "$MARKER_REQUEST") || return 1
  printf %s "$reply" | json_get Parameter.Value
}

peer_answers() {  # is another server of this cluster serving RKE2's supervisor? (directly, never via a proxy)
  for ip in $PEER_IPS; do
    if curl --noproxy '*' --silent --insecure --fail --connect-timeout 3 --max-time 5 -o /dev/null "https://$ip:$SUPERVISOR_PORT/cacerts"; then
      return 0
    fi
  done
  return 1
}

publish_kubeconfig() {  # the admin kubeconfig, pointed at the endpoint, as a SecureString only admins can decrypt
  [ -s "$ROOT$ADMIN_KUBECONFIG" ] || return 1
  body=$(sed "s#https://127.0.0.1:$API_PORT#https://$ENDPOINT:$API_PORT#" "$ROOT$ADMIN_KUBECONFIG" | python3 -c 'import json, sys
print(json.dumps({"Name": sys.argv[1], "Value": sys.stdin.read(), "Type": "SecureString", "KeyId": sys.argv[2],
                  "Overwrite": True, "Tier": "Advanced"}))' "$KUBECONFIG_PARAMETER" "$KUBECONFIG_KEY") || return 1
  ssm PutParameter "$body" >/dev/null
}

mark_initialised() {
  ssm PutParameter "$(printf '{"Name": "%s", "Value": "initialized by %s at %s", "Type": "String", "Overwrite": true}' \
    "$MARKER_PARAMETER" "$NODE_NAME" "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" >/dev/null
}

log "bootstrap of $NODE_NAME ($KIND), RKE2 $INSTALL_VERSION"
retry fetch_secret "$TOKEN_REQUEST" "$ROOT$TOKEN_FILE"
if [ -n "$AGENT_TOKEN_REQUEST" ]; then
  retry fetch_secret "$AGENT_TOKEN_REQUEST" "$ROOT$AGENT_TOKEN_FILE"
fi

MODE='join'
if [ "$INITIALISER" = yes ]; then
  # Initialise a cluster only when none exists: never once the marker says one was initialised
  # (a replaced first server with a fresh disk would otherwise start a second, empty cluster), and
  # not while another server answers (the marker write may have failed).
  state=$(retry marker_state)
  if [ "${state%% *}" = initialized ]; then
    log "the cluster exists ($state): joining at $ENDPOINT"
    write_join_address
  elif peer_answers; then
    log "another server answers: joining at $ENDPOINT"
    write_join_address
  else
    log "no cluster exists yet: initialising it"
    MODE='init'
  fi
fi

if [ "$KIND" = server ] && [ -n "$MANIFEST_PATH" ]; then
  retry "$ROOT$SYNC"
fi

if [ "$CIS" = yes ] && [ "$KIND" = server ] && ! getent passwd etcd >/dev/null; then
  # The CIS profile makes RKE2 refuse to start a server without an etcd user and group.
  useradd -r -c "etcd user" -s /sbin/nologin -M etcd -U
fi

retry download "$INSTALL_SCRIPT_URL" "$ROOT$WORK/install-rke2.sh"
retry env INSTALL_RKE2_TYPE="$KIND" INSTALL_RKE2_VERSION="$INSTALL_VERSION" sh "$ROOT$WORK/install-rke2.sh"

if [ "$CIS" = yes ]; then
  # The kernel parameters the CIS profile checks (protect-kernel-defaults is forced on), from the
  # file the tarball install ships.
  mkdir -p "$ROOT/etc/sysctl.d"
  copied=no
  for source in $CIS_SYSCTL_SOURCES; do
    if [ -f "$ROOT$source" ]; then
      cp -f "$ROOT$source" "$ROOT/etc/sysctl.d/60-rke2-cis.conf"
      copied=yes
      break
    fi
  done
  if [ "$copied" = no ]; then
    log "no rke2-cis-sysctl.conf in $CIS_SYSCTL_SOURCES: the CIS profile will refuse to start the kubelet"
    exit 1
  fi
  systemctl restart systemd-sysctl
fi
systemctl enable --now "rke2-$KIND.service"

if [ "$MODE" = init ]; then
  # From now on this server is one member among others: should its etcd data ever be dropped (the
  # member removed, `kubectl delete node`), RKE2 must rejoin at the endpoint, not initialise a second
  # cluster (k3s-io/k3s#13623). RKE2 reads the file only at start, so the running server is unaffected.
  write_join_address
  retry mark_initialised
  log "cluster initialised; marker written"
  if [ -n "$KUBECONFIG_PARAMETER" ]; then
    # The cluster runs either way: a failed publish only means setting kubeconfig by hand.
    if retry publish_kubeconfig; then
      log "admin kubeconfig published to $KUBECONFIG_PARAMETER"
    else
      log "admin kubeconfig NOT published to $KUBECONFIG_PARAMETER; set the stack's kubeconfig from $ADMIN_KUBECONFIG"
    fi
  fi
fi
if [ "$KIND" = server ] && [ -n "$MANIFEST_PATH" ]; then
  systemctl enable --now rke-aws-sync-manifests.timer
fi
log "bootstrap done ($MODE)"
