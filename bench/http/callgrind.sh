#!/usr/bin/env bash
# Instructions per request of the crawlable pages' routes, read by
# callgrind (user space only, whatever the machine's other load): `rave
# serve` under valgrind without its aggregator; for each route a warm-up of
# 50 requests, then, with the counters zeroed, N requests over one
# keep-alive connection, the counters dumped after them. Prints total Ir ÷
# requests per route; the dumps are kept as OUT.<route> for
# `callgrind_annotate --inclusive=yes OUT.json-miss`.
#
# Routes: /healthz; the JSON listing page and the HTML product page read
# afresh (`Cache-Control: no-cache`) and kept; the JSON page with ratings 1
# and 5 read afresh (two rating partitions merged).
#
# usage: callgrind.sh RAVE_BINARY DATA_DIR [OUT] [PRODUCT]
#   DATA_DIR: a loaded and aggregated data directory, e.g. from
#   `rave load --data DIR --products 100 --comments 20000 --seed 42` and
#   `rave aggregate --data DIR --until-caught-up`
set -euo pipefail
rave=$(realpath "$1") data=$2 out=${3:-/tmp/pages-callgrind/cg} product=${4:-p1}
port=18556
mkdir -p "$(dirname "$out")"
rm -f "$out".*
RAVE_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$out.%p" \
  "$rave" serve --data "$data" --addr "127.0.0.1:$port" \
  --rate-limit-per-minute 0 --admin-token unused --no-aggregator >/dev/null 2>"$out.err" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 200); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.5; done

# requests N PATH [HEADER...]: N GETs of PATH over one connection.
requests() {
  python3 - "$port" "$@" <<'PY'
import http.client, sys
port, n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
headers = dict(h.split(": ", 1) for h in sys.argv[4:])
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
for _ in range(n):
    conn.request("GET", path, headers=headers)
    answer = conn.getresponse()
    answer.read()
    assert answer.status == 200, (path, answer.status)
PY
}

# measure NAME N PATH [HEADER...]
measure() {
  local name=$1 n=$2
  shift 2
  requests 50 "$@"
  callgrind_control -z "$pid" >/dev/null 2>&1
  requests "$n" "$@"
  callgrind_control -d "$pid" >/dev/null 2>&1
  local dump
  dump=$(ls -t "$out.$pid"* | head -1)
  mv "$dump" "$out.$name"
  local ir
  ir=$(callgrind_annotate "$out.$name" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
  echo "$name $((ir / n))"
}

fresh='Cache-Control: no-cache'
measure healthz 1000 /healthz
measure json-miss 300 "/v1/products/$product/comments" "$fresh"
measure html-miss 300 "/products/$product" "$fresh"
measure html-kept 1000 "/products/$product"
measure json-kept 1000 "/v1/products/$product/comments"
measure ratings-miss 300 "/v1/products/$product/comments?rating=1,5" "$fresh"
