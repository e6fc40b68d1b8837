#!/usr/bin/env python3
"""Peak resident memory of `rave export --format google-product-reviews`.

The feed is streamed: the export reads the store a page at a time and writes
each page's XML before reading the next, so what it holds must not grow with
the number of reviews. Reading the store has a cost of its own that does grow
with the store (the embedded engine's cache over a larger file), and the
NDJSON export, streamed the same way, pays it too; so the row compares the
feed's peak with the NDJSON export's over the same store, at a tenth of the
asked size and at the full size (BENCH.md's data set, `rave load`, the same
generator). Peaks are the kernel's (the child's `ru_maxrss` from wait4, what
`/usr/bin/time -v` reports as "Maximum resident set size"). Outputs go to a
temporary directory that is deleted with the data.

    bench/feed_rss.py --rave target/release/rave --comments 1000000   # medium
    bench/feed_rss.py --rave target/release/rave --comments 100000

Exit status 1 when, at either size, the feed's peak exceeds the NDJSON
export's by more than `--max-extra-mib` (32 MiB by default): memory the feed
adds beyond reading the store.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time


def load(rave, data, products, comments):
    subprocess.run(
        [rave, "load", "--data", data, "--products", str(products),
         "--comments", str(comments), "--seed", "42"],
        check=True, stdout=subprocess.DEVNULL)


FORMATS = {
    "ndjson": ["--format", "ndjson"],
    "feed": ["--format", "google-product-reviews",
             "--public-url", "https://reviews.shop.example"],
}


def export_peak(rave, data, form, output):
    """(peak RSS in MiB, seconds, bytes written, what rave said) of one export."""
    started = time.monotonic()
    child = subprocess.Popen(
        [rave, "export", "--data", data, *FORMATS[form], "--output", output],
        stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.monotonic() - started
    stderr = child.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"rave export failed: {stderr}")
    # ru_maxrss is in KiB on Linux.
    return usage.ru_maxrss / 1024, elapsed, os.path.getsize(output), stderr.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rave", required=True, help="the rave binary (a release build)")
    parser.add_argument("--comments", type=int, default=1_000_000,
                        help="the full size (BENCH.md: small 10,000, medium 1,000,000)")
    parser.add_argument("--products", type=int, default=None,
                        help="products (BENCH.md's: one per 100 comments)")
    parser.add_argument("--max-extra-mib", type=float, default=32.0)
    args = parser.parse_args()
    print("| comments | NDJSON export peak RSS | feed export peak RSS | feed minus NDJSON | feed |")
    print("|---:|---:|---:|---:|---|")
    worst = 0.0
    for comments in (args.comments // 10, args.comments):
        products = args.products or max(1, comments // 100)
        with tempfile.TemporaryDirectory(prefix="rave-feed-rss-") as work:
            data = os.path.join(work, "data")
            load(args.rave, data, products, comments)
            ndjson, _, _, _ = export_peak(
                args.rave, data, "ndjson", os.path.join(work, "export.ndjson"))
            feed, elapsed, size, _ = export_peak(
                args.rave, data, "feed", os.path.join(work, "feed.xml"))
        worst = max(worst, feed - ndjson)
        print(f"| {comments:,} | {ndjson:.0f} MiB | {feed:.0f} MiB | {feed - ndjson:+.0f} MiB | "
              f"{size / 1e6:.0f} MB of XML in {elapsed:.1f} s |", flush=True)
    return 0 if worst <= args.max_extra_mib else 1


if __name__ == "__main__":
    sys.exit(main())
