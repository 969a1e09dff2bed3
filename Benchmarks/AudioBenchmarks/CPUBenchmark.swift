import Foundation
import OffstageCore
import OffstageDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time (user + system) to play the same file through our engine and
/// through `paplay`, one after the other on the same server.
///
/// Not side by side: `paplay` at its default latency is cheap because,
/// alone on a null sink, the sink renders its 2 s buffers in 2 s blocks
/// and asks for data rarely. Playing at the same time as a 50 ms stream
/// (the engine's, or `paplay --latency-msec=50`), the sink runs at 50 ms
/// and the same `paplay` took 6× the CPU (73 against 12 ms for 20 s).
enum CPUBenchmark {
    /// - Parameters:
    ///   - engineOnly: plays through the engine in this process only (no
    ///     `paplay`, no `offstage audio play`), for quick comparisons.
    ///   - verbose: prints the engine's CPU time and sleeps per thread, and
    ///     what this process uses, connected and playing nothing, for as
    ///     long as a file plays.
    static func run(server: BenchServer, seconds: Int, latency: Duration?, buffering: Duration?, offstage: String, engineOnly: Bool, verbose: Bool) async throws {
        let directory = server.directory.appendingPathComponent("bench")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let wav = directory.appendingPathComponent("music-\(seconds)s.wav").path
        let ogg = directory.appendingPathComponent("music-\(seconds)s.ogg").path
        try shell("/usr/bin/sox", ["-D", "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "\(seconds)", "pluck", "C4", "pluck", "E4", "vol", "0.5"])
        try shell("/usr/bin/sndfile-convert", [wav, ogg])
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = server.serverAddress
        if server.private { environment["PULSE_COOKIE"] = server.directory.appendingPathComponent("cookie").path }

        print("CPU time to play a \(seconds) s file (user + system; 44.1 kHz stereo; real-time null sink)")
        print("  file   player                                      CPU      wall     ratio to paplay: at 50 ms, at its default")
        for file in [wav, ogg] {
            let kind = file.hasSuffix(".wav") ? "WAV" : "Ogg"
            let paplay = engineOnly ? nil : try child("/usr/bin/paplay", [file], environment: environment)
            let paplayLow = engineOnly ? nil : try child("/usr/bin/paplay", ["--latency-msec=50", file], environment: environment)
            let engine = try await inProcess(file: file, server: server.serverAddress, latency: latency, buffering: buffering)
            let command = engineOnly ? nil : try child(offstage, ["audio", "play", file], environment: environment)
            func row(_ name: String, _ r: (cpu: Duration, wall: Duration)?, ratio: Bool) {
                guard let r else { return }
                func against(_ baseline: (cpu: Duration, wall: Duration)?) -> String {
                    guard ratio, let baseline else { return "" }
                    return String(format: "%.2f", r.cpu.seconds / baseline.cpu.seconds)
                }
                let ratioText = ratio ? "\(against(paplayLow).leftPadded(4))  \(against(paplay).leftPadded(4))" : ""
                print("  \(kind.padding(toLength: 6, withPad: " ", startingAt: 0)) \(name.padding(toLength: 43, withPad: " ", startingAt: 0)) \(milliseconds(r.cpu).leftPadded(9))  \(String(format: "%.2f s", r.wall.seconds).leftPadded(7))  \(ratioText)")
            }
            row("paplay (default latency: 2 s buffers)", paplay, ratio: false)
            row("paplay --latency-msec=50 (baseline)", paplayLow, ratio: false)
            let queue = String(format: "%g", (buffering ?? PulseAudioOptions().buffering).seconds)
            let sinkLatency = Int(((latency ?? PulseAudioOptions().latency).seconds * 1000).rounded())
            row("engine in this process (\(sinkLatency) ms, \(queue) s queue)", engine.total, ratio: true)
            if verbose {
                for thread in engine.threads {
                    print("           thread \(thread.name.padding(toLength: 36, withPad: " ", startingAt: 0)) \(milliseconds(thread.cpu).leftPadded(9))  \(thread.sleeps) sleeps, \(thread.preempted) preempted")
                }
            }
            row("offstage audio play (whole process)", command, ratio: true)
        }
        print("  goal: engine / paplay ≤ 1.0, against paplay at its default (it buffers 2 s and wakes up far less often,")
        print("  but ends late on a null sink) and at the engine's 50 ms latency; see docs/audio.md")
        if verbose {
            print("  per thread, until the end: offstage-pulse is libpulse's loop, offstage-decode the decoder;")
            print("  -qos.overcommit is libdispatch's manager thread (its 1 Hz workqueue monitor), oot.default-qos")
            print("  the benchmark's tasks (setup, events) and Foundation's thread for child processes; threads that")
            print("  exited before the end are not listed")
            // What this process costs doing nothing for as long, connected
            // (which also keeps a private server from exiting when idle).
            let backend = try PulseAudioBackend(options: PulseAudioOptions(server: server.serverAddress))
            let threadsBefore = ThreadUsage.now()
            let before = usage(RUSAGE_SELF)
            try await Task.sleep(for: .seconds(seconds))
            let idle = usage(RUSAGE_SELF) - before
            withExtendedLifetime(backend) {}
            print("  this process for \(seconds) s, connected, playing nothing: \(milliseconds(idle).leftPadded(9))")
            for thread in ThreadUsage.now().since(threadsBefore) {
                print("           thread \(thread.name.padding(toLength: 36, withPad: " ", startingAt: 0)) \(milliseconds(thread.cpu).leftPadded(9))  \(thread.sleeps) sleeps, \(thread.preempted) preempted")
            }
        }
    }

    /// Plays `file` through a backend in this process; CPU from
    /// getrusage(RUSAGE_SELF), and per thread until the end (while the
    /// backend's threads still exist).
    static func inProcess(file: String, server: String, latency: Duration?, buffering: Duration?) async throws -> (total: (cpu: Duration, wall: Duration), threads: [ThreadUsage.Thread]) {
        let threadsBefore = ThreadUsage.now()
        let before = usage(RUSAGE_SELF)
        let start = ContinuousClock.now
        var options = PulseAudioOptions(server: server)
        if let latency { options.latency = latency }
        if let buffering { options.buffering = buffering }
        let backend = try PulseAudioBackend(options: options)
        let id = try backend.makePlayer(AudioPlayerRequest(path: file, appName: "bench"))
        try backend.play(id)
        for await event in backend.events where event == .player(id, .ended) { break }
        let wall = ContinuousClock.now - start
        // The process's time first: reading every thread's files is the benchmark's work, not the engine's.
        let cpu = usage(RUSAGE_SELF) - before
        return ((cpu, wall), ThreadUsage.now().since(threadsBefore))
    }

    /// Runs a child to its end; CPU from its rusage.
    static func child(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (cpu: Duration, wall: Duration) {
        let before = usage(RUSAGE_CHILDREN)
        let start = ContinuousClock.now
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("\(executable) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)") }
        return (usage(RUSAGE_CHILDREN) - before, ContinuousClock.now - start)
    }

    static func shell(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("\(executable) failed") }
    }

    static func usage(_ who: __rusage_who) -> Duration {
        var u = rusage()
        getrusage(__rusage_who_t(who.rawValue), &u)
        func d(_ t: timeval) -> Duration { .seconds(t.tv_sec) + .microseconds(t.tv_usec) }
        return d(u.ru_utime) + d(u.ru_stime)
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
