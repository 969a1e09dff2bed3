/// The rules one player follows, shared by the PulseAudio and the virtual
/// backend so both behave the same: a value that takes what the user asked
/// for and what the server did, and returns what the backend must do.
///
/// ```swift
/// var player = AudioPlayerMachine(role: .music)
/// player.play()                // [.uncork]
/// player.corkRequested()       // [.cork, .emit(.interruptionBegan)]
/// player.uncorkRequested()     // [.emit(.interruptionEnded(shouldResume: true))]
/// ```
public struct AudioPlayerMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// Created, never played (the stream is corked).
        case ready
        case playing
        case paused
        /// Paused by an interruption that has not ended yet.
        case interrupted
        /// Played to the end.
        case ended
        case failed
        case stopped
    }

    /// What the backend must do.
    public enum Action: Sendable, Hashable {
        /// Cork (pause) the stream on the server.
        case cork
        /// Uncork (play) the stream.
        case uncork
        /// Start again from the beginning (after the end).
        case rewind
        /// Report an event.
        case emit(AudioPlayerEvent)
    }

    /// Why a request was refused.
    public enum Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        case interrupted
        case finished(State)
        public var description: String {
            switch self {
            case .interrupted: "the player is interrupted (a call is in progress)"
            case .finished(let state): "the player has \(state == .failed ? "failed" : "stopped")"
            }
        }
    }

    public let role: AudioRole
    public private(set) var state: State = .ready
    /// Played to the end and not moved since: the next play starts over,
    /// even if an interruption came in between.
    private var atEnd = false

    public init(role: AudioRole) { self.role = role }

    /// Whether the player is gone for good (stopped or failed).
    public var isFinished: Bool { state == .stopped || state == .failed }
    /// The player failed during an interruption, which ends with the call.
    private var failedDuringInterruption = false
    /// An interruption has begun and not ended (the player may have failed
    /// since: the interruption still ends with the call).
    public var isInterrupted: Bool { state == .interrupted || failedDuringInterruption }

    /// The user asks to play. After the end, playback starts again from
    /// the beginning, as `AVAudioPlayer` does.
    public mutating func play() throws(Refusal) -> [Action] {
        switch state {
        case .ready, .paused, .ended:
            state = .playing
            if atEnd {
                atEnd = false
                return [.rewind, .uncork]
            }
            return [.uncork]
        case .playing:
            return []
        case .interrupted:
            throw .interrupted
        case .failed, .stopped:
            throw .finished(state)
        }
    }

    /// The user asks to pause.
    public mutating func pause() throws(Refusal) -> [Action] {
        switch state {
        case .playing:
            state = .paused
            return [.cork]
        case .ready, .paused, .interrupted, .ended:
            return []
        case .failed, .stopped:
            throw .finished(state)
        }
    }

    /// The user seeks. A finished player can be played again after a seek.
    public mutating func seek() throws(Refusal) {
        switch state {
        case .failed, .stopped: throw .finished(state)
        case .ended: state = .paused
        default: break
        }
        atEnd = false
    }

    /// The user stops the player for good.
    public mutating func stop() -> [Action] {
        guard !isFinished else { return [] }
        state = .stopped
        return []
    }

    /// The server asks the stream to cork because a call started. A `phone`
    /// player is the call itself and is never interrupted.
    public mutating func corkRequested() -> [Action] {
        guard role != .phone else { return [] }
        switch state {
        case .playing:
            state = .interrupted
            return [.cork, .emit(.interruptionBegan)]
        case .ready, .paused, .ended:
            state = .interrupted
            return [.emit(.interruptionBegan)]
        case .interrupted, .failed, .stopped:
            return []
        }
    }

    /// The server says the call is over: the interruption ends with
    /// `shouldResume`. The player stays paused until the app plays it.
    public mutating func uncorkRequested(shouldResume: Bool = true) -> [Action] {
        if failedDuringInterruption {
            failedDuringInterruption = false
            return [.emit(.interruptionEnded(shouldResume: false))]
        }
        guard state == .interrupted else { return [] }
        state = .paused
        return [.emit(.interruptionEnded(shouldResume: shouldResume))]
    }

    /// The server moved the stream to another output.
    /// - Parameters:
    ///   - oldDeviceGone: the output it was on no longer exists.
    ///   - newDeviceAppeared: the output it is on now just appeared.
    public mutating func moved(
        from: AudioRoute, to: AudioRoute, oldDeviceGone: Bool, newDeviceAppeared: Bool
    ) -> [Action] {
        guard !isFinished else { return [] }
        let reason: AudioRouteChangeReason =
            oldDeviceGone ? .oldDeviceUnavailable : newDeviceAppeared ? .newDeviceAvailable : .override
        let event = Action.emit(.routeChanged(reason: reason, from: from, to: to))
        if reason == .oldDeviceUnavailable, state == .playing {
            state = .paused
            return [.cork, event]
        }
        return [event]
    }

    /// The server started playing the stream.
    public mutating func started() -> [Action] {
        state == .playing ? [.emit(.started)] : []
    }

    /// The server played everything written, up to the end of the file.
    /// The stream is corked, so that nothing written later (a seek) plays
    /// until the app plays again, and a call can interrupt it cleanly.
    public mutating func drained() -> [Action] {
        guard state == .playing else { return [] }
        state = .ended
        atEnd = true
        return [.cork, .emit(.ended)]
    }

    /// The server played everything up to the end of the file, though the
    /// player left `playing` first (a call, a pause, an unplugged output)
    /// in the file's last moments: the server had played its last audio
    /// before the cork reached it, and answered the drain after. The file
    /// ended: `ended` now, not when the app plays again. An interruption,
    /// begun already, ends with the call; the next play starts over, as
    /// after any end.
    public mutating func drainedAfterLeavingPlaying() -> [Action] {
        switch state {
        case .interrupted:
            atEnd = true
            return [.emit(.ended)]
        case .paused:
            state = .ended
            atEnd = true
            return [.emit(.ended)]
        default:
            return drained()
        }
    }

    /// The player cannot go on. A failure during an interruption (a
    /// decoding error met after a seek, or one held until the drain) leaves
    /// the interruption to end with the call, as an ended file does
    /// (``drainedAfterLeavingPlaying()``), without `shouldResume`: there is
    /// nothing to resume. Before, the failed player took the call's end for
    /// nothing, and `interruptionBegan` had no end.
    /// - Parameter streamGone: the server dropped the stream, and will not
    ///   say when the call ends: an interruption ends with the failure.
    public mutating func failed(_ message: String, streamGone: Bool = false) -> [Action] {
        var actions: [Action] = []
        if !isFinished {
            failedDuringInterruption = state == .interrupted
            state = .failed
            actions = [.emit(.failed(message))]
        }
        // The stream is gone: no uncork will come to end an interruption.
        return streamGone ? actions + uncorkRequested() : actions
    }
}
