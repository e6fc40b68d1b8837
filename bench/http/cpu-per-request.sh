#!/usr/bin/env bash
# The server's CPU time per answer of the crawlable pages' routes: the JSON
# listing page and the HTML product page, each as kept (`json`, `html`: the
# same URL again, answered from what the server kept under its ETag) and
# read afresh (`json-miss`, `html-miss`: `Cache-Control: no-cache`, a cache
# miss every time), the page's 304 revalidation and /healthz, each loaded by
# wrk (2 threads, 64 connections) for 4 s, `rounds` times in turn; prints
# the lowest and every figure, in microseconds of rave's user + system time
# per request (from /proc/PID/stat), and each lowest ÷ /healthz's. CPU time
# per request moves far less with the machine's other load than requests
# per second do.
#
# usage: cpu-per-request.sh RAVE_BINARY DATA_DIR [PRODUCT] [ROUNDS]
#   DATA_DIR: a loaded data directory, e.g. the harness's <dir>/rave
set -euo pipefail
rave=$1 data=$2 product=${3:-p1} rounds=${4:-3}
addr=127.0.0.1:18555
RAVE_LOG=warn "$rave" serve --data "$data" --addr "$addr" \
  --rate-limit-per-minute 0 --admin-token unused >/dev/null 2>&1 &
pid=$!
trap 'kill "$pid"' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "http://$addr/healthz" && break; sleep 0.2; done
script=$(mktemp --suffix .lua)
tag=$(curl -sI "http://$addr/products/$product" | awk -F': ' 'tolower($1)=="etag"{print $2}' | tr -d '\r')
printf 'wrk.headers["If-None-Match"] = %s\n' "'$tag'" >"$script"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
tick=$(getconf CLK_TCK)
wrk -t2 -c64 -d2s "http://$addr/products/$product" >/dev/null
for _ in $(seq "$rounds"); do
  for route in json json-miss html html-miss 304 healthz; do
    case $route in
      json) args=("http://$addr/v1/products/$product/comments") ;;
      json-miss) args=(-H 'Cache-Control: no-cache' "http://$addr/v1/products/$product/comments") ;;
      html) args=("http://$addr/products/$product") ;;
      html-miss) args=(-H 'Cache-Control: no-cache' "http://$addr/products/$product") ;;
      304) args=(-s "$script" "http://$addr/products/$product") ;;
      healthz) args=("http://$addr/healthz") ;;
    esac
    before=$(cpu_ticks)
    requests=$(wrk -t2 -c64 -d4s "${args[@]}" | awk '/requests in/{print $1}')
    after=$(cpu_ticks)
    echo "$route $(((after - before) * 1000000 / tick / requests))"
  done
done | awk '{ if (!($1 in low) || $2 < low[$1]) low[$1] = $2; all[$1] = all[$1] " " $2 }
  END { for (r in low) printf "%-10s %4d µs (runs:%s) %.1f× /healthz\n", r, low[r], all[r], low[r] / low["healthz"] }'
rm -f "$script"
