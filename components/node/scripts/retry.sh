# shellcheck shell=sh
# Shell every boot script shares: logging, a retry loop with a time budget, downloads.
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   RETRY_SECONDS RETRY_DELAY
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

log() { printf 'rke-aws: %s\n' "$*" >&2; }

# retry CMD...: run CMD until it succeeds or RETRY_SECONDS have passed.
retry() {
  deadline=$(( $(date +%s) + RETRY_SECONDS ))
  until "$@"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "giving up after ${RETRY_SECONDS}s: $*"
      return 1
    fi
    sleep "$RETRY_DELAY"
  done
}

download() {  # download URL FILE
  curl --fail --silent --show-error --location --connect-timeout 10 --max-time 300 -o "$2.part" "$1" &&
    mv "$2.part" "$2"
}
