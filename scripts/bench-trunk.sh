#!/bin/sh
# Builds the trunk benchmarks and the StateLab sample in release mode, then
# runs the benchmarks. Arguments go to the benchmark (--quick, --iterations N,
# --relaunches N, --cycles N, --only LIST, --placement free,same,split, --strict,
# --keep; --help describes them).
#
#   scripts/bench-trunk.sh            # the full run (about a minute)
#   scripts/bench-trunk.sh --quick    # a smoke run
set -eu
cd "$(dirname "$0")/.."
# One product at a time: the machine is shared, and SwiftPM locks .build anyway.
swift build -c release --product StateLab
swift build -c release --product TrunkBenchmarks
bin="$(swift build -c release --show-bin-path)"
exec "$bin/TrunkBenchmarks" "$@"
