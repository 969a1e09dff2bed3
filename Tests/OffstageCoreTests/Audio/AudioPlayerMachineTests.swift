import Testing
@testable import OffstageCore

@Suite struct AudioPlayerMachineTests {
    @Test func interruptionCorksAPlayingPlayerAndEndsWithoutResuming() throws {
        var player = AudioPlayerMachine(role: .music)
        #expect(try player.play() == [.uncork])
        #expect(player.corkRequested() == [.cork, .emit(.interruptionBegan)])
        #expect(player.state == .interrupted)
        #expect(throws: AudioPlayerMachine.Refusal.interrupted) { try player.play() }
        #expect(player.uncorkRequested() == [.emit(.interruptionEnded(shouldResume: true))])
        #expect(player.state == .paused)
        #expect(try player.play() == [.uncork])
    }

    @Test func aPhonePlayerIsNeverInterrupted() throws {
        var call = AudioPlayerMachine(role: .phone)
        _ = try call.play()
        #expect(call.corkRequested() == [])
        #expect(call.state == .playing)
    }

    @Test func losingTheOutputPausesOnlyWhenTheOldDeviceIsGone() throws {
        var player = AudioPlayerMachine(role: .music)
        _ = try player.play()
        #expect(
            player.moved(from: .speaker, to: .headphones, oldDeviceGone: false, newDeviceAppeared: true)
                == [.emit(.routeChanged(reason: .newDeviceAvailable, from: .speaker, to: .headphones))])
        #expect(player.state == .playing)
        #expect(
            player.moved(from: .headphones, to: .speaker, oldDeviceGone: true, newDeviceAppeared: false)
                == [.cork, .emit(.routeChanged(reason: .oldDeviceUnavailable, from: .headphones, to: .speaker))])
        #expect(player.state == .paused)
    }

    @Test func playingAfterTheEndRewinds() throws {
        var player = AudioPlayerMachine(role: .music)
        _ = try player.play()
        #expect(player.drained() == [.cork, .emit(.ended)])
        #expect(try player.play() == [.rewind, .uncork])
    }

    @Test func aCallAfterTheEndStillRewindsOnThenextPlay() throws {
        var player = AudioPlayerMachine(role: .music)
        _ = try player.play()
        _ = player.drained()
        #expect(player.corkRequested() == [.emit(.interruptionBegan)])
        _ = player.uncorkRequested()
        #expect(try player.play() == [.rewind, .uncork])
    }

    @Test func anEndReachedAfterTheCorkEndsTheFileAndKeepsAnInterruption() throws {
        var player = AudioPlayerMachine(role: .music)
        _ = try player.play()
        #expect(player.corkRequested() == [.cork, .emit(.interruptionBegan)])
        #expect(player.drainedAfterLeavingPlaying() == [.emit(.ended)])
        #expect(player.state == .interrupted)
        #expect(player.uncorkRequested() == [.emit(.interruptionEnded(shouldResume: true))])
        #expect(try player.play() == [.rewind, .uncork])
        // Paused as the file ended: it ended.
        var paused = AudioPlayerMachine(role: .music)
        _ = try paused.play()
        #expect(try paused.pause() == [.cork])
        #expect(paused.drainedAfterLeavingPlaying() == [.emit(.ended)])
        #expect(paused.state == .ended)
        #expect(try paused.play() == [.rewind, .uncork])
    }

    @Test func aFailureDuringAnInterruptionLeavesItToEndWithTheCall() throws {
        var player = AudioPlayerMachine(role: .music)
        _ = try player.play()
        #expect(player.corkRequested() == [.cork, .emit(.interruptionBegan)])
        #expect(player.failed("x.mp3: truncated") == [.emit(.failed("x.mp3: truncated"))])
        #expect(player.state == .failed)
        #expect(player.isInterrupted)
        // Failed, the player took the call's end for nothing: the
        // interruption had no end. It ends now, with nothing to resume.
        #expect(player.uncorkRequested() == [.emit(.interruptionEnded(shouldResume: false))])
        #expect(!player.isInterrupted)
        #expect(player.uncorkRequested() == [])
        // A stream the server dropped hears no call's end: the failure ends it.
        var dropped = AudioPlayerMachine(role: .music)
        _ = try dropped.play()
        _ = dropped.corkRequested()
        #expect(
            dropped.failed("gone", streamGone: true) == [.emit(.failed("gone")), .emit(.interruptionEnded(shouldResume: false))])
        #expect(dropped.uncorkRequested() == [])
        // Failed during a call, then dropped: no uncork will come, so the drop ends it.
        var failedThenDropped = AudioPlayerMachine(role: .music)
        _ = try failedThenDropped.play()
        _ = failedThenDropped.corkRequested()
        _ = failedThenDropped.failed("x.mp3: truncated")
        #expect(failedThenDropped.failed("gone", streamGone: true) == [.emit(.interruptionEnded(shouldResume: false))])
        #expect(failedThenDropped.uncorkRequested() == [])
        // Failed outside an interruption: no end.
        var playing = AudioPlayerMachine(role: .music)
        _ = try playing.play()
        #expect(playing.failed("x.mp3: truncated") == [.emit(.failed("x.mp3: truncated"))])
        #expect(playing.uncorkRequested() == [])
    }

    @Test func seekingAfterTheEndPlaysFromThere() throws {
        var player = AudioPlayerMachine(role: .music)
        _ = try player.play()
        _ = player.drained()
        try player.seek()
        #expect(player.state == .paused)
        #expect(try player.play() == [.uncork])
    }

    @Test func aStoppedOrFailedPlayerRefusesEverything() throws {
        var player = AudioPlayerMachine(role: .music)
        _ = player.failed("x.ogg: corrupt")
        #expect(player.failed("again") == [])
        #expect(throws: AudioPlayerMachine.Refusal.finished(.failed)) { try player.play() }
        var stopped = AudioPlayerMachine(role: .music)
        _ = stopped.stop()
        #expect(throws: AudioPlayerMachine.Refusal.finished(.stopped)) { try stopped.pause() }
    }
}
