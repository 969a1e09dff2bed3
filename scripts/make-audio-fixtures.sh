#!/usr/bin/env bash
# Makes the audio fixtures in samples/fixtures/audio (committed; run again
# only to change them). Needs sox and sndfile-programs (scripts/setup.sh).
#   clip.{wav,flac,ogg,mp3}  a 5 s arpeggio, 22050 Hz mono: one file per format
#   ringtone.wav             a 1 s two-tone ring, played in a loop for calls
set -euo pipefail
cd "$(dirname "$0")/../samples/fixtures/audio"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
notes=(C4 E4 G4 C5 E5 C5 G4 E4 C4 G3)
parts=()
for i in "${!notes[@]}"; do
    sox -D -n -r 22050 -c 1 -b 16 "$tmp/n$i.wav" synth 0.5 pluck "${notes[$i]}" fade 0 0.5 0.05 vol 0.5
    parts+=("$tmp/n$i.wav")
done
sox -D "${parts[@]}" clip.wav
for format in flac ogg mp3; do
    rm -f "clip.$format"
    sndfile-convert clip.wav "clip.$format"
done
sox -D -n -r 22050 -c 1 -b 16 "$tmp/a.wav" synth 0.4 sine 880 sine 960 remix - fade 0 0.4 0.02 vol 0.4
sox -D -n -r 22050 -c 1 -b 16 "$tmp/gap.wav" trim 0 0.2
sox -D "$tmp/a.wav" "$tmp/gap.wav" "$tmp/a.wav" ringtone.wav trim 0 1
ls -l
