import OffstageCore
import Testing
@testable import OffstageDaemon

/// The virtual backend behind the same protocol as the PulseAudio one.
@Suite struct VirtualAudioBackendTests {
    @Test func theEndArrivesAtTheFilesVirtualDuration() async throws {
        let audio = VirtualAudioBackend()
        let recorder = AudioEventRecorder(audio.events)
        let id = try audio.makePlayer(AudioPlayerRequest(path: audioFixture("clip.ogg"), appName: "Radio"))
        try audio.play(id)
        #expect(await recorder.next(.player(id, .started)) != nil)
        audio.advance(by: .milliseconds(4999))
        #expect(try audio.state(id) == .playing)
        #expect(try audio.position(id) == .milliseconds(4999))
        audio.advance(by: .milliseconds(1))
        #expect(await recorder.next(.player(id, .ended)) != nil)
        #expect(audio.now == ClockTime(seconds: 5))
    }

    @Test func injectedInterruptionsAndRouteChangesFollowTheSameRules() async throws {
        let audio: VirtualAudioBackend = VirtualAudioBackend(headphones: true)
        let recorder = AudioEventRecorder(audio.events)
        let id = try audio.makePlayer(AudioPlayerRequest(path: audioFixture("clip.wav"), appName: "Radio"))
        try audio.play(id)
        audio.beginInterruption()
        #expect(await recorder.next(.player(id, .interruptionBegan)) != nil)
        audio.endInterruption(shouldResume: false)
        #expect(await recorder.next(.player(id, .interruptionEnded(shouldResume: false))) != nil)
        try audio.play(id)
        try audio.unplugHeadphones()
        #expect(await recorder.next(.player(id, .routeChanged(reason: .oldDeviceUnavailable, from: .headphones, to: .speaker))) != nil)
        #expect(try audio.state(id) == .paused)
        #expect(throws: AudioError.self) { try audio.unplugHeadphones() }
        audio.resetMediaServices()
        #expect(await recorder.next(.mediaServicesReset) != nil)
        #expect(throws: AudioError.noSuchPlayer(id)) { try audio.play(id) }
    }

    @Test func aCorruptFileIsRefusedAsByTheRealBackend() throws {
        let dir = try makeTemporaryDirectory()
        let path = try truncatedCopy(of: "clip.flac", keeping: 0.5, in: dir)
        let error = #expect(throws: AudioError.self) {
            try VirtualAudioBackend().makePlayer(AudioPlayerRequest(path: path, appName: "Radio"))
        }
        #expect(error?.code == .corrupt)
    }
}
