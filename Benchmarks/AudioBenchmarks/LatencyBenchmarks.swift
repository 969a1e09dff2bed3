import Foundation
import OffstageCore
import OffstageDaemon
import Synchronization

/// Play request → the server's first audio: from the call that creates and
/// plays a player to the `started` event (libpulse's started callback: the
/// server has the first audio and plays it), as the consumer receives it.
enum StartLatencyBenchmark {
    static func run(server: BenchServer, iterations: Int) async throws {
        let backend = try PulseAudioBackend(options: PulseAudioOptions(server: server.serverAddress))
        var events = backend.events.makeAsyncIterator()
        let file = server.directory.appendingPathComponent("bench-start.wav").path
        try CPUBenchmark.shell("/usr/bin/sox", ["-D", "-n", "-r", "44100", "-c", "2", "-b", "16", file, "synth", "2", "sine", "440", "vol", "0.3"])
        var cold = Samples()
        var warm = Samples()
        for i in 0..<(iterations + 5) {
            let start = ContinuousClock.now
            let id = try backend.makePlayer(AudioPlayerRequest(path: file, appName: "bench"))
            try backend.play(id)
            guard let (_, at) = await firstEvent(&events, { $0 == .player(id, .started) }) else { throw BenchmarkError("no started event") }
            try backend.pause(id)
            try backend.seek(id, to: .zero)
            let again = ContinuousClock.now
            try backend.play(id)
            guard let (_, warmAt) = await firstEvent(&events, { $0 == .player(id, .started) }) else { throw BenchmarkError("no started event (warm)") }
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
}

/// The server's cork request reaching the process → the engine's
/// interruption-began event. A second connection (another client, like
/// another app) starts a `phone` stream while our `music` stream plays.
/// The request's arrival is stamped when libpulse hands it to us on its
/// thread; the event's when the consumer receives it.
enum InterruptionBenchmark {
    static func run(server: BenchServer, iterations: Int) async throws {
        let arrivals = Mutex<[AudioPlayerID: ContinuousClock.Instant]>([:])
        var options = PulseAudioOptions(server: server.serverAddress)
        options.serverRequestProbe = { id, cork, time in if cork { arrivals.withLock { $0[id] = time } } }
        let backend = try PulseAudioBackend(options: options)
        let caller = try PulseAudioBackend(options: PulseAudioOptions(server: server.serverAddress))
        var events = backend.events.makeAsyncIterator()
        let music = server.directory.appendingPathComponent("bench-music.wav").path
        let ring = server.directory.appendingPathComponent("bench-ring.wav").path
        try CPUBenchmark.shell("/usr/bin/sox", ["-D", "-n", "-r", "44100", "-c", "2", "-b", "16", music, "synth", "600", "sine", "440", "vol", "0.3"])
        try CPUBenchmark.shell("/usr/bin/sox", ["-D", "-n", "-r", "44100", "-c", "1", "-b", "16", ring, "synth", "1", "sine", "880", "vol", "0.3"])
        let id = try backend.makePlayer(AudioPlayerRequest(path: music, appName: "bench"))
        try backend.play(id)
        guard await firstEvent(&events, { $0 == .player(id, .started) }) != nil else { throw BenchmarkError("music did not start") }
        var delivery = Samples()
        var endToEnd = Samples()
        for i in 0..<(iterations + 5) {
            let call = try caller.makePlayer(AudioPlayerRequest(path: ring, role: .phone, appName: "Phone", looping: true))
            let start = ContinuousClock.now
            try caller.play(call)
            guard let (_, began) = await firstEvent(&events, { $0 == .player(id, .interruptionBegan) }),
                let arrived = arrivals.withLock({ $0[id] })
            else { throw BenchmarkError("no interruption") }
            try caller.stop(call)
            guard await firstEvent(&events, { if case .player(id, .interruptionEnded) = $0 { true } else { false } }) != nil
            else { throw BenchmarkError("the interruption did not end") }
            try backend.play(id)
            if i >= 5 {
                delivery.append(began - arrived)
                endToEnd.append(began - start)
            }
        }
        print("Interruption delivery (\(iterations) calls from another client)")
        print("  cork request in the process → began event   p50 \(microseconds(delivery.p50))   p99 \(microseconds(delivery.p99))   max \(microseconds(delivery.max))")
        print("  phone stream play → began event (context)  p50 \(milliseconds(endToEnd.p50))   p99 \(milliseconds(endToEnd.p99))")
        print("  goal: p99 under 1 ms: \(delivery.p99 < .milliseconds(1) ? "met" : "NOT MET")")
    }
}
