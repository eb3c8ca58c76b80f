#!/usr/bin/env python3
"""Times commands interleaved: one run of each in turn, round after round.

hyperfine runs all the runs of one command before the next command's, so when this machine's
speed drifts during a run (other work, the hypervisor), one command gets the slow minute and
the other the fast one. Interleaving gives each command the same share of every minute, which
is what an A/B of two builds (or hatf against zstd) needs.

Usage: scripts/interleaved_times.py [--rounds N] [--warmup W] [--remove PATH] CMD [CMD ...]
  --rounds N    timed rounds (default 15)
  --warmup W    untimed rounds first (default 2)
  --remove PATH delete PATH before every run (a decoder's or encoder's output: writing over an
                existing file also times the freeing of the old one)
Each CMD is one shell command line. Prints, for each, the median, first quartile and minimum
wall time in milliseconds; exits non-zero if any run fails.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--remove")
    parser.add_argument("commands", nargs="+")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    times = [[] for _ in args.commands]
    for round_no in range(args.warmup + args.rounds):
        for i, command in enumerate(args.commands):
            if args.remove and os.path.exists(args.remove):
                os.remove(args.remove)
            start = time.perf_counter()
            done = subprocess.run(command, shell=True)
            elapsed = (time.perf_counter() - start) * 1000
            if done.returncode != 0:
                print(f"failed (exit {done.returncode}): {command}", file=sys.stderr)
                return 1
            if round_no >= args.warmup:
                times[i].append(elapsed)
    for command, runs in zip(args.commands, times):
        runs.sort()
        print(
            f"median {statistics.median(runs):8.1f} ms  q1 {runs[len(runs) // 4]:8.1f}"
            f"  min {runs[0]:8.1f}  {command}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
