# shellcheck shell=sh
# SigV4-signed S3 GETs with the instance role (after retry.sh and ssm.sh, whose `credentials` this uses):
# objects and listings of the artifacts bucket, through the VPC's S3 gateway endpoint.
# The signature is computed by python3's standard library, not by `curl --aws-sigv4`: RHEL 9 and Rocky 9
# ship curl 7.76.1, whose --aws-sigv4 signs only host and x-amz-date (user headers such as
# x-amz-security-token and x-amz-content-sha256 are signed from curl 7.86.0 on, and S3 signs with no extra
# configuration only from 8.0.0: curl commits 29c4aa00a1, 495d09810a); S3 requires both headers signed.
# Canonical request as AWS's "Signature Version 4 for S3: authenticating requests (AWS4-HMAC-SHA256
# Authorization header)" (S3 API reference): path segments URI-encoded once, the query sorted,
# x-amz-content-sha256: UNSIGNED-PAYLOAD, signed headers host;x-amz-content-sha256;x-amz-date;x-amz-security-token.
# Keys reach python3 in its environment, never on a command line.
# A fragment: components/node/scripts.py puts it after the script's header, which sets
#   REGION S3_HOST
# (shellcheck takes upper-case names for the environment's). Everything below the marker line
# goes into the script byte for byte.
# ---- fragment ----

s3_sign() {  # s3_sign HOST KEY [QUERY-JSON]: three lines: x-amz-date, the request target, the Authorization header
  RKE_AWS_AK="$AK" RKE_AWS_SK="$SK" RKE_AWS_ST="$ST" python3 -c 'import datetime, hashlib, hmac, json, os, sys
from urllib.parse import quote
region, host, key = sys.argv[1], sys.argv[2], sys.argv[3]
query = json.loads(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else {}
ak, sk, st = os.environ["RKE_AWS_AK"], os.environ["RKE_AWS_SK"], os.environ["RKE_AWS_ST"]
now = datetime.datetime.now(datetime.timezone.utc)
stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
def enc(text, safe="-_.~"):
    return quote(text, safe=safe)
path = "/" + enc(key, "/-_.~")
canonical_query = "&".join(enc(k) + "=" + enc(v) for k, v in sorted(query.items()))
headers = {"host": host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD", "x-amz-date": stamp, "x-amz-security-token": st}
signed = ";".join(sorted(headers))
request = "\n".join(["GET", path, canonical_query] + [k + ":" + headers[k] for k in sorted(headers)]
                    + ["", signed, "UNSIGNED-PAYLOAD"])
scope = "/".join([day, region, "s3", "aws4_request"])
to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(request.encode()).hexdigest()])
signing = ("AWS4" + sk).encode()
for part in (day, region, "s3", "aws4_request"):
    signing = hmac.new(signing, part.encode(), hashlib.sha256).digest()
signature = hmac.new(signing, to_sign.encode(), hashlib.sha256).hexdigest()
print(stamp)
print(path + ("?" + canonical_query if canonical_query else ""))
print("AWS4-HMAC-SHA256 Credential=" + ak + "/" + scope + ", SignedHeaders=" + signed + ", Signature=" + signature)' \
    "$REGION" "$1" "$2" "${3:-}"
}

s3_request() {  # s3_request BUCKET KEY QUERY-JSON OUT: a signed GET into OUT; S3's error code in the log on failure
  credentials || { log "no instance role credentials from IMDS yet"; return 1; }
  signed=$(s3_sign "$1.$S3_HOST" "$2" "$3") || return 1
  { IFS= read -r amz_date; IFS= read -r target; IFS= read -r authorization; } <<EOF
$signed
EOF
  if curl --silent --show-error --fail-with-body --connect-timeout 10 --max-time 1800 \
      -H "Authorization: $authorization" -H "x-amz-date: $amz_date" -H "x-amz-security-token: $ST" \
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -o "$4" "https://$1.$S3_HOST$target"; then
    return 0
  fi
  log "S3 GET s3://$1/$2 failed: $(sed -n 's#.*<Code>\(.*\)</Code>.*#\1#p' "$4" 2>/dev/null | head -n 1)"
  rm -f "$4"
  return 1
}

s3_get() {  # s3_get BUCKET KEY FILE: the object into FILE (nothing left behind on failure)
  s3_request "$1" "$2" "" "$3.part" && mv "$3.part" "$3"
}

s3_list() {  # s3_list BUCKET PREFIX: the keys under PREFIX, one a line (every page of ListObjectsV2)
  listing=$(mktemp) || return 1
  token=''
  while :; do
    query=$(python3 -c 'import json, sys
q = {"list-type": "2", "prefix": sys.argv[1]}
if sys.argv[2]:
    q["continuation-token"] = sys.argv[2]
print(json.dumps(q))' "$2" "$token") || { rm -f "$listing"; return 1; }
    s3_request "$1" "" "$query" "$listing" || return 1
    # The keys on stdout; the next page's token (when the listing is truncated) into $listing.next.
    python3 -c 'import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = root.tag.split("}")[0] + "}" if root.tag.startswith("{") else ""
for item in root.findall(ns + "Contents"):
    print(item.findtext(ns + "Key"))
with open(sys.argv[1] + ".next", "w") as f:
    if root.findtext(ns + "IsTruncated") == "true":
        f.write(root.findtext(ns + "NextContinuationToken") or "")' "$listing" || { rm -f "$listing" "$listing.next"; return 1; }
    token=$(cat "$listing.next")
    [ -n "$token" ] || break
  done
  rm -f "$listing" "$listing.next"
}
