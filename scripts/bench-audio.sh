#!/bin/sh
# Runs the audio benchmarks in release mode against a private PulseAudio
# server they start themselves (needs the packages from scripts/setup.sh).
#   scripts/bench-audio.sh            # the full run (a 60 s file, about 9 minutes)
#   scripts/bench-audio.sh --quick    # a 10 s file and fewer iterations
#   scripts/bench-audio.sh --help     # the options (--only cpu|start|interruption, --seconds N,
#                                     # --engine-only, --verbose, --server ADDR, ...)
set -eu
cd "$(dirname "$0")/.."
swift build -c release --product offstage
swift build -c release --product AudioBenchmarks
bin="$(swift build -c release --show-bin-path)"
exec "$bin/AudioBenchmarks" "$@"
