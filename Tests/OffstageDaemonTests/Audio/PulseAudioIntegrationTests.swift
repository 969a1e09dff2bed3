import CPulse
import Foundation
import OffstageCore
import OffstageProtocol
import Testing
@testable import OffstageDaemon

/// Against a real PulseAudio server that each test starts for itself.
@Suite(.serialized) struct PulseAudioIntegrationTests {
    @Test func playbackReachesTheEndWhenTheFileHasPlayed() async throws {
        let rig = try PulseRig()
        let id = try rig.backend.makePlayer(AudioPlayerRequest(path: audioFixture("ringtone.wav"), appName: "Test"))
        #expect(try rig.backend.state(id) == .ready)
        let start = ContinuousClock.now
        try rig.backend.play(id)
        #expect(await rig.recorder.next(.player(id, .started)) != nil)
        #expect(await rig.recorder.next(.player(id, .ended)) != nil)
        let ended = try #require(rig.recorder.time(of: .player(id, .ended)))
        let started = try #require(rig.recorder.time(of: .player(id, .started)))
        // A 1 s file: the end comes once it has played, within the latency.
        // The upper bound counts from the server's start of playback, so
        // a loaded machine's slow start cannot fail it.
        #expect(ended - start >= .milliseconds(950), "ended \(ended - start) after play")
        #expect(ended - started < .milliseconds(1400), "ended \(ended - started) after the server started playing")
        #expect(try rig.backend.state(id) == .ended)
        // At the end the position is the duration, as in the virtual backend.
        #expect(try rig.backend.position(id) == rig.backend.duration(id))
    }

    /// The server cuts a stream's target length to 4 MiB and keeps its
    /// refill size: a 96 kHz 5.1 float stream's 2 s queue went past that,
    /// and the sink was left 0.5 ms of latency (for every stream on it).
    @Test func aQueuePastTheServersLimitIsShortenedNotTheLatency() {
        let latency = Duration.milliseconds(50)
        for (rate, channels) in [(96_000, 6), (384_000, 2), (48_000, 2)] {
            let spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rate), channels: UInt8(channels))
            let attributes = pa_buffer_attr.playback(latency: latency, queued: .seconds(2), spec: spec)
            let latencyBytes = UInt32(rate / 20 * channels * 4)
            #expect(attributes.tlength <= pa_buffer_attr.maximumTargetLength, "\(rate) Hz × \(channels)")
            #expect(attributes.tlength - 2 * attributes.minreq >= latencyBytes, "\(rate) Hz × \(channels)")
            #expect(attributes.minreq % UInt32(channels * 4) == 0)
        }
        // Under the limit the queue is the whole 2 s.
        let stereo = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: 44_100, channels: 2)
        #expect(pa_buffer_attr.playback(latency: latency, queued: .seconds(2), spec: stereo).minreq == 44_100 * 4)
    }

    /// Every stream asks the sink for at least the engine's latency, in
    /// whole frames. Rounded down, a 22,050 Hz stream (50 ms is 1,102.5 of
    /// its frames) asked for 49.977 ms, below the latency anchor's 50 ms,
    /// and the sink took it: a 1 s file no longer ended on the sink's block
    /// boundary, and its end came one block (50 ms) later than at 48 kHz.
    @Test func aStreamAtARateWithoutWholeFramesIn50msLeavesTheSinkAt50ms() async throws {
        let rig = try PulseRig()
        _ = try await rig.playing("ringtone.wav")  // 22,050 Hz
        let (configured, sinks) = try rig.configuredSinkLatency()
        #expect(configured == 50_000, "\(sinks)")
    }

    /// On the real server: a stream whose 2 s queue is past the server's
    /// 4 MiB (192 kHz, 8 channels: 6 MB) leaves the sink at 50 ms. The
    /// server cut its target length and kept its refill size, and the sink
    /// was left 0.5 ms of latency.
    @Test func aStreamPastTheServersLimitLeavesTheSinkAt50ms() async throws {
        let rig = try PulseRig()
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let id = try rig.backend.makePlayer(
            AudioPlayerRequest(path: try silentWAV(rate: 192_000, channels: 8, in: dir), appName: "Radio"))
        try rig.backend.play(id)
        #expect(await rig.recorder.next(.player(id, .started)) != nil)
        let (configured, sinks) = try rig.configuredSinkLatency()
        #expect(configured == 50_000, "\(sinks)")
    }

    /// A file that cannot be decoded past a point plays up to that point,
    /// then fails: the failure came when the decoder met the damage, two
    /// seconds ahead of playback, and the audio the server held was dropped.
    @Test func aFileDamagedMidwayPlaysUpToTheDamageThenFails() async throws {
        let rig = try PulseRig()
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 3,000 bytes of the middle overwritten: libvorbis stops there (its
        // tail still decodes, so the player is made).
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: audioFixture("clip.ogg"))))
        for i in 0..<3000 { bytes[bytes.count / 2 + i] = UInt8((i * 37 + 11) & 0xff) }
        let damaged = dir.appendingPathComponent("damaged.ogg").path
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let id = try rig.backend.makePlayer(AudioPlayerRequest(path: damaged, appName: "Radio"))
        try rig.backend.play(id)
        #expect(await rig.recorder.next(.player(id, .started)) != nil)
        let failure = await rig.recorder.next(timeout: .seconds(20)) {
            if case .player(id, .failed) = $0 { true } else { false }
        }
        guard case .player(_, .failed(let message)) = failure else { Issue.record("no failure: \(rig.recorder.all)"); return }
        // "…: the audio stops at 3.351 s of 5 s (truncated or corrupt there)": not called cut
        #expect(message.hasSuffix(" s (truncated or corrupt there)"), "\(message)")
        let stops = try #require(message.split(separator: " stops at ").last?.split(separator: " ").first.flatMap { Double($0) }, "\(message)")
        let played = try rig.backend.position(id).seconds
        #expect(stops > 1.5, "\(message)")
        #expect(played >= stops - 0.1, "failed at \(played) s of the \(stops) s that decode")
    }

    /// A player made on a server with no sink fails naming the server's
    /// want of an output, not the file ("the server dropped the stream
    /// (No such entity)" after the file's name).
    @Test func aPlayerOnAServerWithNoSinkFailsNamingTheServer() async throws {
        let rig = try PulseRig()
        try rig.pactl("unload-module", "module-null-sink")
        let path = audioFixture("ringtone.wav")
        let id = try rig.backend.makePlayer(AudioPlayerRequest(path: path, appName: "Radio"))
        // The server may have dropped the stream already: play is then refused, as for any failed player.
        do { try rig.backend.play(id) } catch { #expect(error == .refused(id, .finished(.failed)), "\(error)") }
        let failure = await rig.recorder.next(timeout: .seconds(20)) {
            if case .player(id, .failed) = $0 { true } else { false }
        }
        guard case .player(_, .failed(let message)) = failure else { Issue.record("no failure: \(rig.recorder.all)"); return }
        #expect(
            message == "cannot play \(path): \(rig.server.serverAddress) has no output to play on "
                + "(no sink; `pactl load-module module-null-sink` adds one)")
    }

    /// The real backend refuses a sample rate the engine does not play,
    /// as the virtual one does (8 Hz never ended on PulseAudio).
    @Test func aSampleRateTheEngineDoesNotPlayIsRefused() throws {
        let rig = try PulseRig()
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try silentWAV(rate: 8, in: dir)
        let error = #expect(throws: AudioError.self) {
            try rig.backend.makePlayer(AudioPlayerRequest(path: path, appName: "Radio"))
        }
        #expect(error?.code == .notAudio)
        #expect(error?.message == "\(path): its sample rate, 8 Hz, is not one the engine plays (1000 to 384000 Hz)")
    }

    /// Past the 6 channels libpulse's default map names, the server
    /// refused the stream ("Invalid argument") where paplay plays the
    /// file: 8 channels play to the end. Past PulseAudio's 32 the file is
    /// refused when the player is made, by both backends.
    @Test func filesOfManyChannelsPlayUpToThe32PulseAudioTakes() async throws {
        let rig = try PulseRig()
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let eight = try silentWAV(rate: 48_000, seconds: 1, channels: 8, in: dir)
        let id = try rig.backend.makePlayer(AudioPlayerRequest(path: eight, appName: "Surround"))
        try rig.backend.play(id)
        #expect(await rig.recorder.next(.player(id, .ended)) != nil)
        let many = try silentWAV(rate: 8_000, seconds: 1, channels: 33, in: dir)
        let error = #expect(throws: AudioError.self) {
            try rig.backend.makePlayer(AudioPlayerRequest(path: many, appName: "Surround"))
        }
        #expect(error?.code == .notAudio)
        #expect(error?.message == "\(many): it has 33 channels; the engine plays up to 32")
    }

    /// On the server, the stream has the channel map its file names: a
    /// quad file (L, R, Ls, Rs) played as front-left, front-center,
    /// front-right, rear-center (libpulse's default for four channels).
    @Test func aStreamHasTheChannelMapItsFileNames() async throws {
        let rig = try PulseRig()
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let quad = try silentWAV(rate: 48_000, channels: 4, channelMask: 0x33, in: dir)
        let id = try rig.backend.makePlayer(AudioPlayerRequest(path: quad, appName: "Surround"))
        try rig.backend.play(id)
        #expect(await rig.recorder.next(.player(id, .started)) != nil)
        let inputs = try rig.pactl("--format=json", "list", "sink-inputs")
        let stream = try JSONValue(parsing: inputs).arrayValue?.first { $0["properties"]?["application.name"]?.stringValue == "Surround" }
        #expect(stream?["channel_map"]?.stringValue == "front-left,front-right,rear-left,rear-right", "\(inputs)")
        // The stream is named after its file (libpulse sets media.name to the stream's name).
        #expect(stream?["properties"]?["media.name"]?.stringValue == URL(fileURLWithPath: quad).lastPathComponent, "\(inputs)")
    }

    @Test func aPhoneStreamInterruptsMusicAndTheEndSaysResume() async throws {
        let rig = try PulseRig()
        let id = try await rig.playing("clip.ogg")
        let call = try rig.paplay(audioFixture("ringtone.wav"), role: .phone)
        #expect(await rig.recorder.next(.player(id, .interruptionBegan)) != nil)
        #expect(try rig.backend.state(id) == .interrupted)
        #expect(throws: AudioError.refused(id, .interrupted)) { try rig.backend.play(id) }
        let paused = try rig.backend.position(id)
        call.waitUntilExit()
        #expect(await rig.recorder.next(.player(id, .interruptionEnded(shouldResume: true))) != nil)
        #expect(try rig.backend.state(id) == .paused)
        let later = try rig.backend.position(id)
        #expect(abs(later.seconds - paused.seconds) < 0.1, "no progress while interrupted: \(paused) then \(later)")
        try rig.backend.play(id)
        #expect(await rig.recorder.next(.player(id, .started)) != nil)
    }

    @Test func ourOwnCallSourceInterruptsMusicUntilItStops() async throws {
        let rig = try PulseRig()
        let music = try await rig.playing("clip.wav")
        let ring = try rig.backend.makePlayer(
            AudioPlayerRequest(path: audioFixture("ringtone.wav"), role: .phone, appName: "Phone", looping: true))
        try rig.backend.play(ring)
        #expect(await rig.recorder.next(.player(music, .interruptionBegan)) != nil)
        // The ringtone loops: it is still playing after its 1 s file would have
        // ended, and its position has wrapped around.
        #expect(await rig.recorder.next(.player(ring, .ended), timeout: .milliseconds(1500)) == nil)
        #expect(try rig.backend.state(ring) == .playing)
        #expect(try rig.backend.position(ring) < .seconds(1))
        try rig.backend.stop(ring)
        #expect(await rig.recorder.next(.player(music, .interruptionEnded(shouldResume: true))) != nil)
    }

    @Test func aCallThatEndsBeforeTheCorkReachesTheServerStillEndsTheInterruption() async throws {
        let rig = try PulseRig()
        let music = try await rig.playing("clip.wav")
        let caller = try PulseCaller(server: rig.server.serverAddress)
        // The call starts and ends before this client can answer the cork
        // request: the server unmutes the stream it never saw corked and
        // sends no uncork request.
        try rig.backend.withLoopHeld {
            let call = try caller.ring()
            try caller.hangUp(call)
        }
        #expect(await rig.recorder.next(.player(music, .interruptionBegan)) != nil)
        #expect(await rig.recorder.next(.player(music, .interruptionEnded(shouldResume: true))) != nil)
        #expect(try rig.backend.state(music) == .paused)
    }

    /// A call that begins as a file ends, when the server has played its
    /// last audio before this client's cork reaches it: the drain's answer
    /// came after the cork request and was taken for nothing, so the end
    /// came only when the app played again after the call, without `started`.
    @Test func aCallThatBeginsAsTheFileEndsDoesNotHoldBackTheEnd() async throws {
        let rig = try PulseRig()
        let caller = try PulseCaller(server: rig.server.serverAddress)
        let (music, started) = try await playingTheEndOfClip(rig)
        // The call starts before the end. With this client's loop held, the
        // server mutes the music but plays it to the end, and answers the
        // drain after the cork request.
        let (call, ringing) = try rig.backend.withLoopHeld {
            let call = try caller.ring()
            let ringing = ContinuousClock.now
            waitUntilTheEndHasPlayed(since: started)
            return (call, ringing)
        }
        try #require(ringing - started < .seconds(1), "the call began \(ringing - started) after play, too late for the race")
        #expect(await rig.recorder.next(.player(music, .interruptionBegan)) != nil)
        // The file has played: it ends during the call, not after it.
        #expect(await rig.recorder.next(.player(music, .ended), timeout: .seconds(2)) != nil)
        #expect(try rig.backend.position(music) == rig.backend.duration(music))
        try caller.hangUp(call)
        #expect(await rig.recorder.next(.player(music, .interruptionEnded(shouldResume: true))) != nil)
        let events = rig.recorder.all.compactMap { event -> AudioPlayerEvent? in
            if case .player(music, let playerEvent) = event { playerEvent } else { nil }
        }
        #expect(events == [.started, .interruptionBegan, .ended, .interruptionEnded(shouldResume: true)])
        // As after any end, playing again starts over.
        try rig.backend.play(music)
        // Read at once: read after `started`, a loaded machine's late wake-up
        // of this task counted as played time (CI saw more than 1 s).
        #expect(try rig.backend.position(music) < .seconds(1))
        #expect(await rig.recorder.next(.player(music, .started)) != nil)
        #expect(try rig.backend.position(music) < .seconds(4))  // and not back at the end (5 s)
    }

    /// The same race with a pause: paused after the server had played the
    /// whole file, the player took the drain's answer for nothing, and the
    /// next play ended at once instead of starting over.
    @Test func aPauseAsTheFileEndsEndsIt() async throws {
        let rig = try PulseRig()
        let (music, started) = try await playingTheEndOfClip(rig)
        // Held while the rest of the file plays, then paused.
        try rig.backend.withLoopHeld {
            // Still playing when the hold began: else the race is not set up.
            try #require(try rig.backend.state(music) == .playing && ContinuousClock.now - started < .seconds(1))
            waitUntilTheEndHasPlayed(since: started)
            try rig.backend.pause(music)
        }
        #expect(await rig.recorder.next(.player(music, .ended), timeout: .seconds(2)) != nil)
        #expect(try rig.backend.state(music) == .ended)
        #expect(try rig.backend.position(music) == rig.backend.duration(music))
        try rig.backend.play(music)
        #expect(try rig.backend.position(music) < .seconds(1))
        #expect(await rig.recorder.next(.player(music, .started)) != nil)
        #expect(try rig.backend.state(music) == .playing)
    }

    /// `clip.wav`'s last 1.5 s playing, which fit the server's queue: all of
    /// it written and the drain asked for (each look a round trip to the
    /// server); and when it started.
    func playingTheEndOfClip(_ rig: PulseRig) async throws -> (AudioPlayerID, ContinuousClock.Instant) {
        let music = try rig.backend.makePlayer(AudioPlayerRequest(path: audioFixture("clip.wav"), appName: "Radio"))
        try rig.backend.seek(music, to: .milliseconds(3500))
        try rig.backend.play(music)
        #expect(await rig.recorder.next(.player(music, .started)) != nil)
        let started = try #require(rig.recorder.time(of: .player(music, .started)))
        let limit = ContinuousClock.now + .seconds(5)
        while try !rig.backend.isDraining(music) {
            try #require(ContinuousClock.now < limit, "the player did not ask for the drain within 5 s")
            _ = try rig.backend.route()
        }
        return (music, started)
    }

    /// Blocks (holding the client's loop) until the rest of the file has
    /// played: its 1.5 s, with a margin of 2.5 s for a server starved by a
    /// loaded machine (1 s was once short with two test runs at once).
    /// Nothing can be awaited: the drain's answer is what the held loop
    /// holds back.
    func waitUntilTheEndHasPlayed(since started: ContinuousClock.Instant) {
        Thread.sleep(forTimeInterval: max(0, (started + .seconds(4) - ContinuousClock.now).seconds))
    }

    @Test func musicPlayedDuringACallThatStartedWhileItWasPausedIsInterrupted() async throws {
        let rig = try PulseRig()
        let music = try await rig.playing("clip.wav")
        try rig.backend.pause(music)
        _ = try rig.backend.route()  // the server has the stream corked before the call starts
        let caller = try PulseCaller(server: rig.server.serverAddress)
        let call = try caller.ring()
        // role-cork passed over the corked stream when the call started.
        try rig.backend.play(music)
        #expect(await rig.recorder.next(.player(music, .interruptionBegan)) != nil)
        #expect(try rig.backend.state(music) == .interrupted)
        try caller.hangUp(call)
        #expect(await rig.recorder.next(.player(music, .interruptionEnded(shouldResume: true))) != nil)
    }

    @Test func musicStartedDuringACallIsInterrupted() async throws {
        let rig = try PulseRig()
        let caller = try PulseCaller(server: rig.server.serverAddress)
        let call = try caller.ring()
        _ = try rig.backend.route()  // the call's stream is on the server
        // Interrupted as soon as its stream is ready, before any play; a play is then refused, as iOS refuses one during a call.
        let music = try rig.backend.makePlayer(AudioPlayerRequest(path: audioFixture("clip.wav"), appName: "Test"))
        #expect(await rig.recorder.next(.player(music, .interruptionBegan)) != nil)
        #expect(try rig.backend.state(music) == .interrupted)
        #expect(throws: AudioError.refused(music, .interrupted)) { try rig.backend.play(music) }
        try caller.hangUp(call)
        #expect(await rig.recorder.next(.player(music, .interruptionEnded(shouldResume: true))) != nil)
    }

    /// A player that fails during a call still hears the call's end, and
    /// its interruption ends then, without `shouldResume`. Finished, it
    /// took the call's end for nothing, and `interruptionBegan` stayed
    /// without an end.
    @Test func aFailureDuringACallEndsTheInterruptionWithTheCall() async throws {
        let rig = try PulseRig()
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Half of the MP3: made (its header says 5 s), cut at about 2.5 s.
        let cut = try truncatedCopy(of: "clip.mp3", keeping: 0.5, in: dir)
        let music = try rig.backend.makePlayer(AudioPlayerRequest(path: cut, appName: "Radio"))
        try rig.backend.play(music)
        #expect(await rig.recorder.next(.player(music, .started)) != nil)
        let caller = try PulseCaller(server: rig.server.serverAddress)
        let call = try caller.ring()
        #expect(await rig.recorder.next(.player(music, .interruptionBegan)) != nil)
        // Sought past the cut during the call: decoding fails before any audio.
        try rig.backend.seek(music, to: .milliseconds(4500))
        let failure = await rig.recorder.next { if case .player(music, .failed) = $0 { true } else { false } }
        guard case .player(_, .failed(let message)) = failure else { Issue.record("no failure: \(rig.recorder.all)"); return }
        #expect(try rig.backend.state(music) == .failed)
        try caller.hangUp(call)
        #expect(await rig.recorder.next(.player(music, .interruptionEnded(shouldResume: false))) != nil)
        let events = rig.recorder.all.compactMap { event -> AudioPlayerEvent? in
            if case .player(music, let playerEvent) = event { playerEvent } else { nil }
        }
        #expect(events == [.started, .interruptionBegan, .failed(message), .interruptionEnded(shouldResume: false)])
    }

    @Test func unpluggingTheHeadphonesMovesTheStreamAndPauses() async throws {
        let rig = try PulseRig(headphones: true)
        #expect(try rig.backend.route() == .headphones)
        let id = try await rig.playing("clip.flac")
        try rig.backend.unplugHeadphones()
        #expect(
            await rig.recorder.next(.player(id, .routeChanged(reason: .oldDeviceUnavailable, from: .headphones, to: .speaker)))
                != nil)
        #expect(try rig.backend.state(id) == .paused)
        #expect(try rig.backend.route() == .speaker)
        try rig.backend.plugHeadphones()
        #expect(
            await rig.recorder.next(.player(id, .routeChanged(reason: .newDeviceAvailable, from: .speaker, to: .headphones)))
                != nil)
        #expect(try rig.backend.state(id) == .paused, "plugging in does not resume")
    }

    @Test func everyPlayerSeesTheRouteOfHeadphonesPluggedInAfterConnecting() async throws {
        let rig = try PulseRig()
        let first = try rig.backend.makePlayer(AudioPlayerRequest(path: audioFixture("clip.wav"), appName: "Radio"))
        let second = try rig.backend.makePlayer(AudioPlayerRequest(path: audioFixture("clip.ogg"), appName: "Podcast"))
        for id in [first, second] {
            try rig.backend.play(id)
            #expect(await rig.recorder.next(.player(id, .started)) != nil)
        }
        try rig.backend.plugHeadphones()
        for id in [first, second] {
            #expect(
                await rig.recorder.next(.player(id, .routeChanged(reason: .newDeviceAvailable, from: .speaker, to: .headphones))) != nil)
        }
        for id in [first, second] { try rig.backend.play(id) }
        try rig.backend.unplugHeadphones()
        for id in [first, second] {
            #expect(
                await rig.recorder.next(.player(id, .routeChanged(reason: .oldDeviceUnavailable, from: .headphones, to: .speaker))) != nil)
            #expect(try rig.backend.state(id) == .paused)
        }
    }

    /// Two outputs appear while this client is busy: the stream moves to
    /// the first, then to the headphones. The first move's listing, answered
    /// after both, showed the headphones already, so the second move was
    /// taken for an override (from the headphones to the headphones).
    @Test func aSecondOutputThatAppearsBeforeTheFirstMoveIsHandledIsStillANewDevice() async throws {
        let rig = try PulseRig()
        let id = try await rig.playing("clip.wav")
        try rig.backend.withLoopHeld {
            try rig.pactl(
                "load-module", "module-null-sink", "sink_name=offstage_dock", "rate=48000", "channels=2",
                "sink_properties=\"device.description=Dock device.form_factor=speaker\"")
            try rig.pactl("load-module", "module-null-sink", PrivatePulseAudio.headphonesModuleArguments)
        }
        #expect(
            await rig.recorder.next(.player(id, .routeChanged(reason: .newDeviceAvailable, from: .speaker, to: .speaker))) != nil)
        #expect(
            await rig.recorder.next(.player(id, .routeChanged(reason: .newDeviceAvailable, from: .speaker, to: .headphones))) != nil)
        #expect(!rig.recorder.all.contains { if case .player(_, .routeChanged(reason: .override, _, _)) = $0 { true } else { false } })
    }

    /// A player stopped before its stream was ready left a corked stream
    /// on the server for as long as the connection lasted: libpulse cannot
    /// disconnect a stream it is still creating.
    @Test func aPlayerStoppedBeforeItsStreamIsReadyLeavesNothingOnTheServer() throws {
        let rig = try PulseRig()
        try rig.backend.withLoopHeld {
            // Nothing reaches the server while the loop is held: the stream is still being created.
            let id = try rig.backend.makePlayer(AudioPlayerRequest(path: audioFixture("clip.wav"), appName: "Stopped early"))
            try rig.backend.stop(id)
        }
        // Answered after the stream is created (and then disconnected), then after its disconnection.
        _ = try rig.backend.route()
        _ = try rig.backend.route()
        let inputs = try rig.pactl("list", "sink-inputs")
        #expect(!inputs.contains("Stopped early"), "\(inputs)")
        // The connection still makes and plays players.
        _ = try rig.backend.makePlayer(AudioPlayerRequest(path: audioFixture("clip.wav"), appName: "Later"))
        _ = try rig.backend.route()
        #expect(try rig.pactl("list", "sink-inputs").contains("Later"))
    }

    @Test func seekingToTheEndWhilePausedEndsOnPlay() async throws {
        let rig = try PulseRig()
        let id = try await rig.playing("ringtone.wav", appName: "Test")
        try rig.backend.pause(id)
        try rig.backend.seek(id, to: .seconds(1))
        try rig.backend.play(id)
        #expect(await rig.recorder.next(.player(id, .ended)) != nil)
        // After the end a seek does not play on its own.
        try rig.backend.seek(id, to: .milliseconds(200))
        #expect(try rig.backend.state(id) == .paused)
        #expect(await rig.recorder.next(.player(id, .ended), timeout: .seconds(1)) == nil)
        let position = try rig.backend.position(id)
        #expect(abs(position.seconds - 0.2) < 0.1, "the paused stream played on: \(position)")
    }

    @Test func aKilledServerIsReconnectedAndReportedAsAReset() async throws {
        let rig = try PulseRig()
        let id = try await rig.playing("clip.mp3")
        rig.server.kill()
        #expect(await rig.recorder.next { if case .disconnected = $0 { true } else { false } } != nil)
        #expect(throws: AudioError.noSuchPlayer(id)) { try rig.backend.play(id) }
        try rig.server.restart()
        #expect(await rig.recorder.next(.mediaServicesReset) != nil)
        // Players can be made again, and play.
        _ = try await rig.playing("clip.mp3")
    }

    /// A restarted server numbers its sinks afresh: headphones plugged in
    /// after the reset take an index the old server had used. Before
    /// 395a43a the connection kept the old server's sinks, so the new
    /// output was not new, and the move was reported as an override.
    @Test func headphonesPluggedInAfterAResetAreANewDevice() async throws {
        let rig = try PulseRig()
        // The connection learns the old server's headphones from a move.
        let before = try await rig.playing("clip.wav")
        try rig.backend.plugHeadphones()
        #expect(await rig.recorder.next(.player(before, .routeChanged(reason: .newDeviceAvailable, from: .speaker, to: .headphones))) != nil)
        rig.server.kill()
        #expect(await rig.recorder.next { if case .disconnected = $0 { true } else { false } } != nil)
        try rig.server.restart()
        #expect(await rig.recorder.next(.mediaServicesReset) != nil)
        let id = try await rig.playing("clip.wav")
        try rig.backend.plugHeadphones()
        #expect(await rig.recorder.next(.player(id, .routeChanged(reason: .newDeviceAvailable, from: .speaker, to: .headphones))) != nil)
    }

    @Test func seekingMovesThePositionAndTheEnd() async throws {
        let rig = try PulseRig()
        let id = try rig.backend.makePlayer(AudioPlayerRequest(path: audioFixture("clip.wav"), appName: "Radio"))
        try rig.backend.seek(id, to: .milliseconds(4500))
        #expect(abs(try rig.backend.position(id).seconds - 4.5) < 0.01)
        let start = ContinuousClock.now
        try rig.backend.play(id)
        #expect(await rig.recorder.next(.player(id, .ended)) != nil)
        let ended = try #require(rig.recorder.time(of: .player(id, .ended)))
        let started = try #require(rig.recorder.time(of: .player(id, .started)))
        #expect(ended - start >= .milliseconds(450), "ended \(ended - start) after play")
        #expect(ended - started < .milliseconds(900), "ended \(ended - started) after the server started playing")
        // Playing again after the end starts over.
        try rig.backend.play(id)
        #expect(await rig.recorder.next(.player(id, .started)) != nil)
        #expect(try rig.backend.position(id) < .seconds(1))
        try rig.backend.setVolume(id, 0.5)
        #expect(throws: AudioError.self) { try rig.backend.setVolume(id, 2) }
    }

    @Test func aServerThatIsNotRunningIsAClearError() throws {
        let error = #expect(throws: AudioError.self) {
            try PulseAudioBackend(options: PulseAudioOptions(server: "unix:/nonexistent/native"))
        }
        #expect(error?.code == .serverUnavailable)
        #expect(error?.message.contains("unix:/nonexistent/native") == true)
    }
}
