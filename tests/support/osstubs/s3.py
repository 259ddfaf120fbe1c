"""S3 for the boot-script tests (behind tests/support/osstubs/curl): objects and ListObjectsV2 pages of the
buckets in $STUB_STATE's `s3` ({bucket: {key: content}}), and AWS's public agent bucket (`public`: {url:
content}). Every signed request is checked with botocore's own S3 SigV4 signer (the AWS SDK for Python)
against the keys tests/support/stubs/curl hands out from IMDS: a request it would not sign the same way is refused
as S3 refuses it (403 SignatureDoesNotMatch; the signature botocore makes: sigv4.py, next to this file). Logged
to $STUB_LOG like tests/support/stubs/curl.py's calls."""
import datetime
import json
import os
import sys
from urllib.parse import parse_qsl, unquote, urlsplit
from xml.sax.saxutils import escape

sys.dont_write_bytecode = True  # no __pycache__ among the stand-ins
from sigv4 import expected_signature  # noqa: E402 - this file's directory is first on sys.path

# The keys every signature is checked against: the instance role's, as tests/support/stubs/curl hands them out
# from IMDS (access key, secret key, session token).
SIGNING_KEYS = ("AKIA", "secret", "session")

state_path, log_path = os.environ["STUB_STATE"], os.environ["STUB_LOG"]
with open(state_path) as f:
    state = json.load(f)
VALUED = {"-X", "-H", "-o", "--data", "--user", "--aws-sigv4", "--max-time", "--connect-timeout", "-d", "--noproxy"}
args, headers, opts, url = sys.argv[1:], {}, {}, None
i = 0
while i < len(args):
    a = args[i]
    if a in VALUED:
        v = args[i + 1]
        if a == "-H":
            k, _, val = v.partition(":")
            headers[k.strip().lower()] = val.strip()
        else:
            opts[a] = v
        i += 2
        continue
    if not a.startswith("-"):
        url = a
    i += 1
with open(log_path, "a") as f:
    f.write(json.dumps({"url": url, "target": "", "data": None, "sigv4": None, "s3": True}) + "\n")


def reply(status, body):
    if "-o" in opts:
        with open(opts["-o"], "w") as out:
            out.write(body)
    else:
        sys.stdout.write(body)
    if status >= 400:
        if "--fail-with-body" not in args and "-o" in opts:
            os.remove(opts["-o"])
        sys.exit(22)
    sys.exit(0)


def error(status, code, message):
    reply(status, f"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{message}</Message></Error>")


parts = urlsplit(url)
host = parts.netloc
if parts.scheme == "file":  # curl copies a local file; the node's files are under the scratch root
    path = os.environ["RKE_AWS_ROOT"] + parts.path
    if not os.path.isfile(path):
        sys.stderr.write(f"curl: (37) Couldn't open file {parts.path}\n")
        sys.exit(37)
    with open(path) as f:
        reply(200, f.read())
if host.startswith("s3."):  # path-style: AWS's public agent bucket, unsigned
    if url in state.get("public", {}):
        reply(200, state["public"][url])
    error(404, "NoSuchKey", "The specified key does not exist.")
bucket, _, endpoint = host.partition(".s3.")
region = endpoint.split(".")[0]
if headers.get("x-amz-security-token") != "session":
    error(403, "InvalidToken", "The provided token is malformed or otherwise invalid.")
if headers.get("x-amz-content-sha256") != "UNSIGNED-PAYLOAD":
    error(400, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256")
expected = expected_signature(url, headers, SIGNING_KEYS, region)
day = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d")
want = (f"AWS4-HMAC-SHA256 Credential=AKIA/{day}/{region}/s3/aws4_request, "
        f"SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature={expected}")
if headers.get("authorization") != want:
    state.setdefault("s3_refused", []).append(url)
    with open(state_path, "w") as f:
        json.dump(state, f)
    error(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.")
objects = state.get("s3", {}).get(bucket)
if objects is None:
    error(404, "NoSuchBucket", "The specified bucket does not exist")
query = dict(parse_qsl(parts.query, keep_blank_values=True))
if query.get("list-type") == "2":
    prefix, size = query.get("prefix", ""), int(state.get("s3_page_size", 1000))
    keys = sorted(k for k in objects if k.startswith(prefix))
    start = int(query.get("continuation-token") or 0)
    page = keys[start:start + size]
    truncated = start + size < len(keys)
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            f"<Name>{bucket}</Name><Prefix>{escape(prefix)}</Prefix><KeyCount>{len(page)}</KeyCount>"
            f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>"
            + (f"<NextContinuationToken>{start + size}</NextContinuationToken>" if truncated else "")
            + "".join(f"<Contents><Key>{escape(k)}</Key><Size>{len(objects[k])}</Size></Contents>" for k in page)
            + "</ListBucketResult>")
    reply(200, body)
key = unquote(parts.path[1:])
if key not in objects:
    error(404, "NoSuchKey", "The specified key does not exist.")
reply(200, objects[key])
