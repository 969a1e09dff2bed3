#!/bin/sh
# Runs the audio benchmarks in release mode against a private PulseAudio
# server they start themselves (needs the packages from scripts/setup.sh).
#   scripts/bench-audio.sh            # the full run (a 60 s file, about 9 minutes)
#   scripts/bench-audio.sh --quick    # a 10 s file and fewer iterations
#   scripts/bench-audio.sh --help     # the options (--only cpu|start|interruption, --seconds N,
#                                     # --engine-only, --verbose, --server ADDR, ...)
set -eu
cd "$(dirname "$0")/.."
# Linked with Swift's runtime and Foundation statically, as an installed
# `offstage` should be: each run of the command starts about 10 ms sooner
# (no dynamic linking of the Swift libraries), which the CPU benchmark's
# `offstage audio play` row counts. In a build directory of their own:
# SwiftPM compiles everything again when the flag changes, and the other
# benchmark scripts build without it.
build="swift build -c release --static-swift-stdlib --scratch-path .build/static"
$build --product offstage
$build --product AudioBenchmarks
bin="$($build --show-bin-path)"
exec "$bin/AudioBenchmarks" "$@"
