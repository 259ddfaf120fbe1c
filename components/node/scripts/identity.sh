# shellcheck shell=sh
# The service-account issuer's keys for kube-apiserver (servers only), from SSM, before RKE2 starts (RKE1:
# before Docker is installed, so before `rke up` can start kube-apiserver with the directory bound in):
# the signing key (a SecureString only the servers' role may read) and the public keys kube-apiserver
# accepts. After retry.sh and ssm.sh (fetch_secret writes 0600 through a temporary file).
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   ROOT IDENTITY_DIR IDENTITY_KEY_REQUEST IDENTITY_KEY_FILE IDENTITY_TRUSTED_REQUEST IDENTITY_TRUSTED_FILE
#   IDENTITY_GENERATIONS (optional)
# (shellcheck takes upper-case names for the environment's). An empty request skips that file (the
# signing key while the servers only trust ours, components/plan/identity_apiserver.py). Everything below
# the marker line goes into the script byte for byte.
# ---- fragment ----

pem_file() {  # pem_file REQUEST FILE MARKER: a parameter holding PEM text into FILE, refused unless it is PEM
  retry fetch_secret "$1" "$2" || return 1
  if ! grep -q -- "-----BEGIN $3" "$2"; then
    rm -f "$2"
    log "the parameter in $1 holds no PEM $3 block"
    return 1
  fi
}

if [ -n "$IDENTITY_KEY_REQUEST$IDENTITY_TRUSTED_REQUEST" ]; then
  # Which key generations this server was booted to trust and sign with (a rotation step changes it, so the
  # server shows as stale until it is replaced: components/plan/identity.py key_step).
  log "service-account keys: ${IDENTITY_GENERATIONS:-1}"
  (umask 077 && mkdir -p "$ROOT$IDENTITY_DIR")
  chmod 0700 "$ROOT$IDENTITY_DIR"
  if [ -n "$IDENTITY_TRUSTED_REQUEST" ]; then
    pem_file "$IDENTITY_TRUSTED_REQUEST" "$ROOT$IDENTITY_TRUSTED_FILE" "PUBLIC KEY"
  fi
  if [ -n "$IDENTITY_KEY_REQUEST" ]; then
    pem_file "$IDENTITY_KEY_REQUEST" "$ROOT$IDENTITY_KEY_FILE" ""
  fi
fi
