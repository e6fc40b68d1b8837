#!/usr/bin/env python3
"""A soak run of `rave serve`: mixed reads and writes for a while, then rest.

Loads BENCH.md's small set (100 products, 10,000 comments) into a fresh data
directory, starts `rave serve` on it, and for --seconds (600 by default)
keeps writers posting comments and readers walking listings with mixed
filters, sorts and pages. Every 10 s it samples the server's resident memory
(VmRSS), open file descriptors and CPU time from /proc. Then it stops the load
and lets the server rest for --idle seconds (60), sampling the same way, and
checks that every acknowledged comment reads back.

It prints a table of the samples and a summary; it fails (exit 1) if an
acknowledged comment is missing, if the server used more than 2 % of one core
while resting, or if memory or descriptors grew during the last half of the
load by more than 10 % (a leak shows as steady growth; the first half is
warm-up: caches fill, the allocator settles).

Usage (from the repository root, on a release build):
    cargo build --release -p rave-cli
    python3 bench/soak.py [--rave target/release/rave] [--seconds 600] [--idle 60]
"""

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "soak-admin-token"
TICKS = os.sysconf("SC_CLK_TCK")


def proc_sample(pid):
    """(rss in KiB, open fds, cpu ticks) of `pid`."""
    rss = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    return rss, fds, ticks


class Load:
    """Writers and readers against one server until `stop` is set."""

    def __init__(self, host, port, products):
        self.host, self.port, self.products = host, port, products
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acknowledged = []
        self.counts = {"posts": 0, "reads": 0, "errors": 0}

    def count(self, what):
        with self.lock:
            self.counts[what] += 1

    def request(self, conn, method, path, body=None):
        headers = {"Authorization": f"Bearer {TOKEN}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
            body = json.dumps(body)
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()

    def writer(self, n):
        rng = random.Random(n)
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        i = 0
        while not self.stop.is_set():
            i += 1
            product = f"p{rng.randrange(1, self.products + 1)}"
            body = {
                "author": f"soak{n}-{rng.randrange(50)}",
                "language": rng.choice(["en", "en", "de", "fr", "es"]),
                "rating": rng.randrange(1, 6),
                "title": f"soak {n}/{i}",
                "body": "soak " * rng.randrange(5, 60),
            }
            try:
                status, data = self.request(conn, "POST", f"/v1/products/{product}/comments", body)
            except (OSError, http.client.HTTPException):
                self.count("errors")
                conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                continue
            if status == 201:
                with self.lock:
                    self.acknowledged.append(json.loads(data)["id"])
                self.count("posts")
            else:
                self.count("errors")

    def reader(self, n):
        rng = random.Random(1000 + n)
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        while not self.stop.is_set():
            product = f"p{min(self.products, int(rng.paretovariate(1.2)))}"
            query = [f"limit={rng.choice([10, 20, 50])}"]
            if rng.random() < 0.5:
                query.append(f"language={rng.choice(['en', 'de', 'fr'])}")
            if rng.random() < 0.5:
                query.append("rating=" + ",".join(sorted({str(rng.randrange(1, 6)) for _ in range(2)})))
            if rng.random() < 0.3:
                query.append(f"sort={rng.choice(['oldest', 'highest', 'lowest', 'helpful'])}")
            path = f"/v1/products/{product}/comments?" + "&".join(query)
            try:
                for _ in range(rng.randrange(1, 4)):  # follow a few pages
                    status, data = self.request(conn, "GET", path)
                    if status != 200:
                        self.count("errors")
                        break
                    self.count("reads")
                    cursor = json.loads(data).get("next_cursor")
                    if not cursor:
                        break
                    path = path.split("&cursor=")[0] + f"&cursor={cursor}"
                if rng.random() < 0.2:
                    self.request(conn, "GET", f"/products/{product}")
                    self.count("reads")
            except (OSError, http.client.HTTPException):
                self.count("errors")
                conn = http.client.HTTPConnection(self.host, self.port, timeout=30)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rave", default="target/release/rave")
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--idle", type=int, default=60)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=4)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="rave-soak-")
    data = os.path.join(work, "data")
    print(f"loading the small set into {data}", flush=True)
    subprocess.run(
        [args.rave, "load", "--data", data, "--products", "100", "--comments", "10000", "--seed", "42"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = subprocess.Popen(
        [args.rave, "serve", "--addr", "127.0.0.1:0", "--data", data, "--admin-token", TOKEN,
         "--rate-limit-per-minute", "0"],
        stdout=subprocess.PIPE,
        stderr=open(os.path.join(work, "server.log"), "w"),
        text=True,
    )
    try:
        line = server.stdout.readline().strip()
        address = line.removeprefix("rave listening on http://")
        host, port = address.rsplit(":", 1)
        port = int(port)
        pid = server.pid
        load = Load(host, port, 100)
        threads = [threading.Thread(target=load.writer, args=(n,)) for n in range(args.writers)]
        threads += [threading.Thread(target=load.reader, args=(n,)) for n in range(args.readers)]
        samples = []
        start = time.monotonic()

        def sample(phase):
            rss, fds, ticks = proc_sample(pid)
            with load.lock:
                counts = dict(load.counts)
            samples.append((phase, time.monotonic() - start, rss, fds, ticks, counts))
            previous = samples[-2] if len(samples) > 1 else None
            cpu = 0.0
            if previous:
                cpu = (ticks - previous[4]) / TICKS / (samples[-1][1] - previous[1]) * 100
            print(f"{phase:5} {samples[-1][1]:7.0f} s  rss {rss / 1024:7.1f} MiB  fds {fds:4}  "
                  f"cpu {cpu:6.1f} %  posts {counts['posts']:7}  reads {counts['reads']:8}  "
                  f"errors {counts['errors']}", flush=True)

        sample("start")
        for thread in threads:
            thread.start()
        while time.monotonic() - start < args.seconds:
            time.sleep(10)
            sample("load")
        load.stop.set()
        for thread in threads:
            thread.join()
        rest_start = time.monotonic()
        sample("rest")
        rest_ticks = samples[-1][4]
        while time.monotonic() - rest_start < args.idle:
            time.sleep(10)
            sample("rest")
        rest_cpu = (samples[-1][4] - rest_ticks) / TICKS / (time.monotonic() - rest_start) * 100

        missing = []
        conn = http.client.HTTPConnection(host, port, timeout=30)
        for comment in load.acknowledged:
            conn.request("GET", f"/v1/comments/{comment}")
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                missing.append(comment)

        load_samples = [s for s in samples if s[0] == "load"]
        half = load_samples[len(load_samples) // 2:]
        rss_growth = (half[-1][2] - half[0][2]) / half[0][2] * 100 if half else 0.0
        fd_growth = (half[-1][3] - half[0][3]) / half[0][3] * 100 if half else 0.0
        print()
        print(f"load {args.seconds} s ({args.writers} writers, {args.readers} readers): "
              f"{load.counts['posts']} posts acknowledged, {load.counts['reads']} reads, "
              f"{load.counts['errors']} errors")
        print(f"second half of the load: rss {half[0][2] / 1024:.1f} -> {half[-1][2] / 1024:.1f} MiB "
              f"({rss_growth:+.1f} %), fds {half[0][3]} -> {half[-1][3]} ({fd_growth:+.1f} %)")
        print(f"rest {args.idle} s: cpu {rest_cpu:.2f} % of one core, "
              f"rss {samples[-1][2] / 1024:.1f} MiB, fds {samples[-1][3]}")
        print(f"acknowledged comments read back: {len(load.acknowledged) - len(missing)} of "
              f"{len(load.acknowledged)}")
        failed = []
        if missing:
            failed.append(f"{len(missing)} acknowledged comments missing, e.g. {missing[:3]}")
        if rest_cpu > 2.0:
            failed.append(f"the server used {rest_cpu:.1f} % of a core at rest")
        if rss_growth > 10 or fd_growth > 10:
            failed.append("memory or descriptors grew through the second half of the load")
        for failure in failed:
            print(f"FAILED: {failure}")
        return 1 if failed else 0
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
