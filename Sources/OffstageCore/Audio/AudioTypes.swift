/// The role of an audio stream, carried to the sound server as
/// `media.role`. The server's policy (PulseAudio's `module-role-cork`)
/// interrupts `music` streams while a `phone` stream plays.
public enum AudioRole: String, Sendable, Hashable, CaseIterable {
    /// Media playback (AVAudioSession's playback category).
    case music
    /// A call: the ringtone or the call's audio. It interrupts music.
    case phone
}

/// Where sound goes, as iOS names the output ports that matter here.
public enum AudioRoute: String, Sendable, Hashable, CaseIterable {
    case speaker
    case headphones
}

/// Why the route changed (`AVAudioSessionRouteChangeReason`).
public enum AudioRouteChangeReason: String, Sendable, Hashable {
    /// The device in use went away (headphones unplugged). iOS pauses playback.
    case oldDeviceUnavailable
    /// A new device appeared and took over (headphones plugged in).
    case newDeviceAvailable
    /// The route was moved for another reason (a user or policy choice).
    case override
}

/// Identifies one player of an audio backend.
public struct AudioPlayerID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: Int
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "player \(rawValue)" }
}

/// Something that happened to one player.
public enum AudioPlayerEvent: Sendable, Hashable {
    /// The server started playing: the first audio was accepted.
    case started
    /// Another stream took over (a call): the player was paused
    /// (`AVAudioSessionInterruptionTypeBegan`).
    case interruptionBegan
    /// The interruption is over (`AVAudioSessionInterruptionTypeEnded`).
    /// The player stays paused; an app resumes it only when `shouldResume`.
    case interruptionEnded(shouldResume: Bool)
    /// The output changed. With ``AudioRouteChangeReason/oldDeviceUnavailable``
    /// a playing player was paused.
    case routeChanged(reason: AudioRouteChangeReason, from: AudioRoute, to: AudioRoute)
    /// Playback reached the end of the file and the server played it all.
    case ended
    /// The player cannot go on (a decoding error mid-file, the stream
    /// failed); the message names the file.
    case failed(String)
}

/// What an audio backend reports.
public enum AudioEvent: Sendable, Hashable {
    /// Connected to the sound server (its name or address).
    case connected(String)
    /// The connection to the sound server was lost; every player is gone
    /// and the backend is reconnecting.
    case disconnected(String)
    /// Reconnected after a loss (`AVAudioSessionMediaServicesWereResetNotification`):
    /// players can be created again.
    case mediaServicesReset
    /// Something happened to a player.
    case player(AudioPlayerID, AudioPlayerEvent)
}

extension AudioPlayerEvent: CustomStringConvertible {
    public var description: String {
        switch self {
        case .started: "started"
        case .interruptionBegan: "interruption began"
        case .interruptionEnded(let shouldResume): shouldResume ? "interruption ended (shouldResume)" : "interruption ended"
        case .routeChanged(let reason, let from, let to): "route changed: \(reason.rawValue) (\(from.rawValue) → \(to.rawValue))"
        case .ended: "ended"
        case .failed(let message): "failed: \(message)"
        }
    }
}

extension AudioEvent: CustomStringConvertible {
    public var description: String {
        switch self {
        case .connected(let server): "connected to \(server)"
        case .disconnected(let why): "disconnected: \(why)"
        case .mediaServicesReset: "media services were reset"
        case .player(let id, let event): "\(id): \(event)"
        }
    }
}

extension Duration {
    /// This much played, as a position in a file `length` long: from its
    /// start round again when looping, else held at its end (and never
    /// before its start). The real and virtual players and `audio play`'s
    /// reckoning all place a position so.
    public func position(inFileOf length: Duration, looping: Bool) -> Duration {
        let played = max(.zero, self)
        if looping, length > .zero { return .nanoseconds(played.nanoseconds % length.nanoseconds) }
        return min(played, length)
    }
}
