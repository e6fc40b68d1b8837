#!/usr/bin/env bash
# Instructions per request of `rave dynamodb-api`'s GetItem, Query, PutItem
# and UpdateItem, read by callgrind: a table (string pk/sk, a GSI on
# owner/rank projecting ALL) holding 40 items of about 220 bytes in one
# partition; a warm-up; then, with the counters zeroed, 2,000 GetItems of
# one item, 1,000 Queries of a 20-item page, 500 PutItems rewriting one item
# (a number in it changed each time: a PutItem of the same item writes
# nothing) and 500 UpdateItems adding 1 to one of its numbers, each set over one
# keep-alive connection, the counters dumped after each. A write is sent
# only after the last was answered, so each is a commit of its own (its
# fsync is the kernel's, which callgrind does not count). Prints total Ir ÷
# requests; the dumps are kept for `callgrind_annotate --inclusive=yes
# OUT/get.out` (query.out, put.out, update.out).
#
# usage: callgrind.sh RAVE_BINARY [OUT_DIR]
set -euo pipefail
rave=$(realpath "$1") out=${2:-/tmp/wire-callgrind}
port=18566
rm -rf "$out" && mkdir -p "$out/data"
RAVE_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" \
  "$rave" dynamodb-api --data "$out/data" --addr "127.0.0.1:$port" >"$out/server.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
python3 - "$port" "$pid" "$out" <<'PY'
import http.client, json, subprocess, sys, time, glob, os
port, pid, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
headers = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Date": "20261128T120000Z",
    "Authorization": "AWS4-HMAC-SHA256 Credential=local/20261128/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64,
}
for _ in range(300):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.connect()
        break
    except OSError:
        time.sleep(0.2)
def call(op, body):
    conn.request("POST", "/", json.dumps(body), dict(headers, **{"X-Amz-Target": "DynamoDB_20120810." + op}))
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit(f"{op}: {r.status} {data!r}")
    return data
S = lambda s: {"S": s}
call("CreateTable", {
    "TableName": "comments", "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "owner", "rank")],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "GlobalSecondaryIndexes": [{"IndexName": "byOwner",
        "KeySchema": [{"AttributeName": "owner", "KeyType": "HASH"}, {"AttributeName": "rank", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}]})
for i in range(40):
    item = {"pk": S("p1"), "sk": S(f"c#{i:04d}"), "owner": S("u1"), "rank": S(f"{i:04d}"),
            "author": S(f"user-{i}"), "stars": {"N": str(i % 5 + 1)},
            "body": S(("A fine product, works as described. " * 3)[:100]),
            "created": S("2026-11-28T12:00:00Z")}
    call("PutItem", {"TableName": "comments", "Item": item})
get = {"TableName": "comments", "Key": {"pk": S("p1"), "sk": S("c#0007")}}
query = {"TableName": "comments", "KeyConditionExpression": "pk = :p",
         "ExpressionAttributeValues": {":p": S("p1")}, "Limit": 20}
def put(n):
    return {"TableName": "comments", "Item": {"pk": S("p1"), "sk": S("c#0007"), "owner": S("u1"),
            "rank": S("0007"), "author": S("user-7"), "stars": {"N": "3"},
            "body": S(("A fine product, works as described. " * 3)[:100]),
            "created": S("2026-11-28T12:00:00Z"), "version": {"N": str(n)}}}
update = {"TableName": "comments", "Key": {"pk": S("p1"), "sk": S("c#0007")},
          "UpdateExpression": "ADD #c :one", "ExpressionAttributeNames": {"#c": "count"},
          "ExpressionAttributeValues": {":one": {"N": "1"}}}
size = len(call("GetItem", get))
def measure(name, op, body, count):
    """`body` is a request's body, or a function of its number giving one."""
    make = body if callable(body) else lambda n: body
    for n in range(300):
        call(op, make(n))
    subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
    for n in range(300, 300 + count):
        call(op, make(n))
    before = set(glob.glob(f"{out}/cg.*"))
    subprocess.run(["callgrind_control", "-d", name, pid], check=True, capture_output=True)
    time.sleep(1)
    dump = sorted(set(glob.glob(f"{out}/cg.*")) - before, key=os.path.getmtime)[-1]
    os.rename(dump, f"{out}/{name}.out")
    with open(f"{out}/{name}.out") as f:
        total = next(int(l.split()[1]) for l in f if l.startswith("summary:") or l.startswith("totals:"))
    print(f"{name:6} {total // count:>8} Ir/request  ({count} requests, {out}/{name}.out)")
print(f"GetItem answer: {size} bytes")
measure("get", "GetItem", get, 2000)
measure("query", "Query", query, 1000)
measure("put", "PutItem", put, 500)
measure("update", "UpdateItem", update, 500)
PY
