import Testing
@testable import OffstageCore

private func t(_ seconds: Double) -> ClockTime { ClockTime(seconds: seconds) }

@Suite struct VirtualAudioServerTests {
    @Test func playbackEndsExactlyWhenTheFileHasPlayed() throws {
        var server = VirtualAudioServer()
        let id = server.makePlayer(duration: .seconds(3), role: .music, at: t(0)).id
        #expect(try server.play(id, at: t(1)).map(\.event) == [.player(id, .started)])
        #expect(server.nextDeadline == t(4))
        #expect(server.advance(to: t(2.5)) == [])
        #expect(try server.position(id) == .milliseconds(1500))
        #expect(server.advance(to: t(10)) == [TimedAudioEvent(time: t(4), event: .player(id, .ended))])
        #expect(try server.position(id) == .seconds(3))
        #expect(server.now == t(10))
    }

    @Test func pauseAndSeekMoveTheEnd() throws {
        var server = VirtualAudioServer()
        let id = server.makePlayer(duration: .seconds(10), role: .music, at: t(0)).id
        _ = try server.play(id, at: t(0))
        _ = try server.pause(id, at: t(2))
        #expect(server.nextDeadline == nil)
        _ = try server.seek(id, to: .seconds(7), at: t(5))
        _ = try server.play(id, at: t(6))
        #expect(server.nextDeadline == t(9))
        #expect(server.advance(to: t(9)).map(\.event) == [.player(id, .ended)])
    }

    @Test func aPhonePlayerInterruptsMusicUntilItStops() throws {
        var server = VirtualAudioServer()
        let music = server.makePlayer(duration: .seconds(60), role: .music, at: t(0)).id
        _ = try server.play(music, at: t(0))
        let ring = server.makePlayer(duration: .seconds(2), role: .phone, looping: true, at: t(1)).id
        let began = try server.play(ring, at: t(5))
        #expect(began.map(\.event) == [.player(ring, .started), .player(music, .interruptionBegan)])
        #expect(try server.position(music) == .seconds(5))
        _ = server.advance(to: t(20))
        #expect(try server.position(music) == .seconds(5), "an interrupted player does not move")
        #expect(try server.position(ring) == .seconds(1), "a looping player wraps around")
        let ended = try server.stop(ring, at: t(20))
        #expect(ended.map(\.event) == [.player(music, .interruptionEnded(shouldResume: true))])
        #expect(try server.state(music) == .paused)
    }

    @Test func musicCreatedDuringACallStartsInterrupted() throws {
        var server = VirtualAudioServer()
        _ = server.beginInterruption(at: t(0))
        let (id, events) = server.makePlayer(duration: .seconds(3), role: .music, at: t(1))
        #expect(events.map(\.event) == [.player(id, .interruptionBegan)])
        #expect(throws: AudioError.refused(id, .interrupted)) { try server.play(id, at: t(1)) }
    }

    @Test func anEndFallingBeforeANewPlayerIsStillReported() throws {
        var server = VirtualAudioServer()
        let first = server.makePlayer(duration: .seconds(1), role: .music, at: t(0)).id
        _ = try server.play(first, at: t(0))
        let (_, events) = server.makePlayer(duration: .seconds(1), role: .music, at: t(5))
        #expect(events == [TimedAudioEvent(time: t(1), event: .player(first, .ended))])
    }

    @Test func anInjectedInterruptionCanEndWithoutResume() throws {
        var server = VirtualAudioServer()
        let id = server.makePlayer(duration: .seconds(60), role: .music, at: t(0)).id
        _ = try server.play(id, at: t(0))
        #expect(server.beginInterruption(at: t(1)).map(\.event) == [.player(id, .interruptionBegan)])
        #expect(throws: AudioError.refused(id, .interrupted)) { try server.play(id, at: t(2)) }
        #expect(
            server.endInterruption(shouldResume: false, at: t(3)).map(\.event)
                == [.player(id, .interruptionEnded(shouldResume: false))])
    }

    @Test func unpluggingHeadphonesPausesPlayback() throws {
        var server = VirtualAudioServer(headphonesPlugged: true)
        let id = server.makePlayer(duration: .seconds(60), role: .music, at: t(0)).id
        _ = try server.play(id, at: t(0))
        #expect(
            server.unplugHeadphones(at: t(4)).map(\.event)
                == [.player(id, .routeChanged(reason: .oldDeviceUnavailable, from: .headphones, to: .speaker))])
        #expect(server.route == .speaker)
        #expect(try server.state(id) == .paused)
        #expect(try server.position(id) == .seconds(4))
        #expect(
            server.plugHeadphones(at: t(5)).map(\.event)
                == [.player(id, .routeChanged(reason: .newDeviceAvailable, from: .speaker, to: .headphones))])
    }

    @Test func aResetDropsEveryPlayer() throws {
        var server = VirtualAudioServer()
        let id = server.makePlayer(duration: .seconds(60), role: .music, at: t(0)).id
        #expect(server.resetMediaServices(at: t(1)).map(\.event).last == .mediaServicesReset)
        #expect(throws: AudioError.noSuchPlayer(id)) { try server.play(id, at: t(2)) }
    }

    @Test func endsAreReportedInTimeOrder() throws {
        var server = VirtualAudioServer()
        let long = server.makePlayer(duration: .seconds(5), role: .music, at: t(0)).id
        let short = server.makePlayer(duration: .seconds(2), role: .music, at: t(0)).id
        _ = try server.play(long, at: t(0))
        _ = try server.play(short, at: t(0))
        #expect(
            server.advance(to: t(6))
                == [
                    TimedAudioEvent(time: t(2), event: .player(short, .ended)),
                    TimedAudioEvent(time: t(5), event: .player(long, .ended)),
                ])
    }
}

/// Where a position falls in a file, for every player and `audio play`.
@Suite struct PositionInFileTests {
    @Test func loopingRoundsFromTheStartAndOtherwiseHoldsAtTheEnd() {
        let length = Duration.seconds(1)
        #expect(Duration.milliseconds(1500).position(inFileOf: length, looping: true) == .milliseconds(500))
        // Exactly at the end, a loop is at its start again: it read as the end.
        #expect(Duration.seconds(1).position(inFileOf: length, looping: true) == .zero)
        #expect(Duration.seconds(2).position(inFileOf: length, looping: true) == .zero)
        #expect(Duration.milliseconds(1500).position(inFileOf: length, looping: false) == length)
        #expect(Duration.milliseconds(-5).position(inFileOf: length, looping: false) == .zero)
        #expect(Duration.milliseconds(-5).position(inFileOf: length, looping: true) == .zero)
        #expect(Duration.seconds(3).position(inFileOf: .zero, looping: true) == .zero)
    }
}
