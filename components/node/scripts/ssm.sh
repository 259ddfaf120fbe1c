# shellcheck shell=sh
# IMDSv2 credentials and SigV4-signed SSM calls (Ubuntu images carry curl >= 8 and python3, but
# no AWS CLI); after retry.sh.
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   IMDS REGION SSM_HOST
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

json_get() {  # json_get KEY[.KEY...] < JSON: the value, or fail
  python3 -c 'import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1].split("."):
    value = value[key]
sys.stdout.write(value if isinstance(value, str) else json.dumps(value))' "$1"
}

# Instance metadata never goes through a proxy (--noproxy '*': curl before 7.86 reads no CIDR in
# no_proxy, and IMDS answers only on the link).
credentials() {  # the instance role's keys from IMDSv2 into AK, SK, ST
  imds_token=$(curl --noproxy '*' --fail --silent --show-error --max-time 5 -X PUT \
    -H "X-aws-ec2-metadata-token-ttl-seconds: 300" "$IMDS/api/token") || return 1
  role=$(curl --noproxy '*' --fail --silent --show-error --max-time 5 -H "X-aws-ec2-metadata-token: $imds_token" \
    "$IMDS/meta-data/iam/security-credentials/") || return 1
  [ -n "$role" ] || return 1
  creds=$(curl --noproxy '*' --fail --silent --show-error --max-time 5 -H "X-aws-ec2-metadata-token: $imds_token" \
    "$IMDS/meta-data/iam/security-credentials/$role") || return 1
  # One python3 for the three keys (base64 text, no blanks inside): a node retrying SSM while its NAT
  # gateway is still being created comes here every few seconds.
  keys=$(printf %s "$creds" | python3 -c 'import json, sys
c = json.load(sys.stdin)
print(c["AccessKeyId"], c["SecretAccessKey"], c["Token"])') || return 1
  read -r AK SK ST <<EOF
$keys
EOF
  [ -n "$AK" ] && [ -n "$SK" ] && [ -n "$ST" ]
}

ssm() {  # ssm ACTION JSON: SSM's answer on stdout; on failure SSM's own error text goes to the log
  credentials || { log "no instance role credentials from IMDS yet"; return 1; }
  if answer=$(curl --silent --show-error --fail-with-body --connect-timeout 10 --max-time 60 \
      --aws-sigv4 "aws:amz:$REGION:ssm" --user "$AK:$SK" -H "x-amz-security-token: $ST" \
      -H "X-Amz-Target: AmazonSSM.$1" -H "Content-Type: application/x-amz-json-1.1" \
      --data "$2" "https://$SSM_HOST/"); then
    printf %s "$answer"
  else
    log "SSM $1 failed: $answer"
    return 1
  fi
}

fetch_secret() {  # fetch_secret REQUEST FILE: a SecureString into FILE (0600); nothing is left behind on failure
  # Parsed only when SSM answered: a failed call is logged once (by ssm), not again as python3's
  # traceback on an empty input.
  reply=$(ssm GetParameter "$1") || return 1
  value=$(printf %s "$reply" | json_get Parameter.Value) || return 1
  if [ -z "$value" ]; then
    log "the parameter in $1 is empty"
    return 1
  fi
  if ! (umask 077 && printf %s "$value" > "$2.tmp" && mv "$2.tmp" "$2"); then
    rm -f "$2.tmp"
    return 1
  fi
}
