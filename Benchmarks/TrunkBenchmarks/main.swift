// The trunk benchmarks: Offstage's callback round trip, wake, relaunch and a
// virtual-time scenario, each printed next to a baseline measured in the same
// run. `scripts/bench-trunk.sh` builds (release) and runs it; `--help` lists
// the options (ArgumentParser, `TrunkBenchmarksCommand`).
//
// The same binary plays three parts, chosen at start:
// - spawned by the daemon (OFFSTAGE_SOCKET in the environment, no argument):
//   a no-op Offstage app, `BenchApp`;
// - `--child-pingpong FD raw|json`: the other end of the baseline ping-pong;
// - otherwise: the benchmark driver.

#if canImport(Glibc)
    import Glibc
#endif

if BenchApp.isLaunchedByDaemon {
    Placement.pinPeerIfAsked()
    BenchApp.run()
}
if let child = PingPongChild(arguments: CommandLine.arguments) {
    Placement.pinPeerIfAsked()
    child.run()
}

// Parsed by hand rather than with `main()`: in top-level code that call
// resolves to the synchronous `ParsableCommand.main()`.
do {
    let command = try TrunkBenchmarksCommand.parse()
    try await command.run()
} catch {
    TrunkBenchmarksCommand.exit(withError: error)
}
