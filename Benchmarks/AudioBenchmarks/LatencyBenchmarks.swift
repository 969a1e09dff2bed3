import Foundation
import OffstageCore
import OffstageDaemon
import Synchronization

/// Play request → the server's first audio: from the call that creates and
/// plays a player to the `started` event (libpulse's started callback: the
/// server has the first audio and plays it), stamped as the engine reports it.
enum StartLatencyBenchmark {
    static func run(server: BenchServer, iterations: Int) async throws {
        let recorder = AudioEventRecorder()
        var options = PulseAudioOptions(server: server.serverAddress)
        options.eventProbe = { event, time in recorder.record(event, at: time) }
        let backend = try PulseAudioBackend(options: options)
        let file = server.directory.appendingPathComponent("bench-start.wav").path
        try CPUBenchmark.shell("/usr/bin/sox", ["-D", "-n", "-r", "44100", "-c", "2", "-b", "16", file, "synth", "2", "sine", "440", "vol", "0.3"])
        var cold = Samples()
        var warm = Samples()
        for i in 0..<(iterations + 5) {
            let start = ContinuousClock.now
            let id = try backend.makePlayer(AudioPlayerRequest(path: file, appName: "bench"))
            try backend.play(id)
            guard await recorder.next(.player(id, .started)) != nil, let at = recorder.time(of: .player(id, .started)) else {
                throw BenchmarkError("no started event")
            }
            try backend.pause(id)
            try backend.seek(id, to: .zero)
            let again = ContinuousClock.now
            try backend.play(id)
            guard let warmAt = await startedTime(of: id, after: at, recorder) else { throw BenchmarkError("no started event (warm)") }
            try backend.stop(id)
            if i >= 5 {
                cold.append(at - start)
                warm.append(warmAt - again)
            }
        }
        print("Play request → first audio accepted by the server (\(iterations) plays of a 44.1 kHz stereo WAV)")
        print("  open file + create stream + play   p50 \(milliseconds(cold.p50))   p99 \(milliseconds(cold.p99))   max \(milliseconds(cold.max))")
        print("  play an existing paused player      p50 \(milliseconds(warm.p50))   p99 \(milliseconds(warm.p99))   max \(milliseconds(warm.max))")
        print("  goal: under 30 ms: \(cold.p99 < .milliseconds(30) ? "met" : "NOT MET") (p99 of the cold start)")
    }

    /// The time of the next `started` of `id` (a second one, after `earlier`).
    static func startedTime(of id: AudioPlayerID, after earlier: ContinuousClock.Instant, _ recorder: AudioEventRecorder) async -> ContinuousClock.Instant? {
        guard await recorder.next(.player(id, .started)) != nil else { return nil }
        return recorder.times(of: .player(id, .started)).last
    }
}

/// The server's cork request reaching the process → the engine's
/// interruption-began event. A second connection (another client, like
/// another app) starts a `phone` stream while our `music` stream plays.
/// The request's arrival is stamped when libpulse hands it to us on its
/// thread; the event when the engine reports it, and when a task reading
/// the backend's `events` receives it.
enum InterruptionBenchmark {
    static func run(server: BenchServer, iterations: Int) async throws {
        let arrivals = Mutex<[AudioPlayerID: ContinuousClock.Instant]>([:])
        let reported = AudioEventRecorder()
        var options = PulseAudioOptions(server: server.serverAddress)
        options.serverRequestProbe = { id, cork, time in if cork { arrivals.withLock { $0[id] = time } } }
        options.eventProbe = { event, time in reported.record(event, at: time) }
        let backend = try PulseAudioBackend(options: options)
        let received = AudioEventRecorder(backend.events)
        let caller = try PulseAudioBackend(options: PulseAudioOptions(server: server.serverAddress))
        let music = server.directory.appendingPathComponent("bench-music.wav").path
        let ring = server.directory.appendingPathComponent("bench-ring.wav").path
        try CPUBenchmark.shell("/usr/bin/sox", ["-D", "-n", "-r", "44100", "-c", "2", "-b", "16", music, "synth", "600", "sine", "440", "vol", "0.3"])
        try CPUBenchmark.shell("/usr/bin/sox", ["-D", "-n", "-r", "44100", "-c", "1", "-b", "16", ring, "synth", "1", "sine", "880", "vol", "0.3"])
        var id = try backend.makePlayer(AudioPlayerRequest(path: music, appName: "bench"))
        try backend.play(id)
        guard await received.next(.player(id, .started)) != nil else { throw BenchmarkError("music did not start") }
        var stuck = 0
        var engine = Samples()
        var consumer = Samples()
        var endToEnd = Samples()
        var missed = 0
        for i in 0..<(iterations + 5) {
            let call = try caller.makePlayer(AudioPlayerRequest(path: ring, role: .phone, appName: "Phone", looping: true))
            let start = ContinuousClock.now
            try caller.play(call)
            let current = id
            let began = await received.next(timeout: .seconds(2)) { $0 == .player(current, .interruptionBegan) }
            // A call of a few milliseconds, as short as a dropped call.
            try? await Task.sleep(for: .milliseconds(20))
            try caller.stop(call)
            let player = id
            guard await received.next(timeout: .seconds(5), { if case .player(player, .interruptionEnded) = $0 { true } else { false } }) != nil
            else {
                // The server never sent the uncork: start a new music player.
                stuck += 1
                if CommandLine.arguments.contains("--verbose") { print("stuck at call \(i): \(received.all.suffix(8))") }
                try backend.stop(id)
                id = try backend.makePlayer(AudioPlayerRequest(path: music, appName: "bench"))
                try backend.play(id)
                guard await received.next(.player(id, .started)) != nil else { throw BenchmarkError("music did not start again") }
                continue
            }
            try backend.play(id)
            guard began != nil, let arrived = arrivals.withLock({ $0.removeValue(forKey: id) }),
                let reportedAt = reported.times(of: .player(id, .interruptionBegan)).last,
                let got = received.times(of: .player(id, .interruptionBegan)).last
            else {
                missed += 1
                continue
            }
            if i >= 5 {
                engine.append(reportedAt - arrived)
                consumer.append(got - arrived)
                endToEnd.append(got - start)
            }
        }
        print("Interruption delivery (\(iterations) calls from another client)")
        print("  cork request in the process → engine reports began     p50 \(microseconds(engine.p50))   p99 \(microseconds(engine.p99))   max \(microseconds(engine.max))")
        print("  cork request in the process → a task receives began    p50 \(microseconds(consumer.p50))   p99 \(microseconds(consumer.p99))   max \(microseconds(consumer.max))")
        print("  phone stream play → a task receives began (context)    p50 \(milliseconds(endToEnd.p50))   p99 \(milliseconds(endToEnd.p99))")
        if missed > 0 { print("  calls with no interruption within 2 s: \(missed) of \(iterations + 5)") }
        if stuck > 0 { print("  calls whose interruption never ended (no uncork from the server in 5 s): \(stuck) of \(iterations + 5)") }
        // The figure ends at the engine's event; a task's receipt adds
        // a hop through Swift concurrency, shown for the daemon that will consume it.
        func verdict(_ samples: Samples) -> String { samples.p99 < .milliseconds(1) ? "met" : "NOT MET" }
        print("  goal: p99 under 1 ms to the engine's began event: \(verdict(engine)); up to a receiving task: \(verdict(consumer))")
    }
}
