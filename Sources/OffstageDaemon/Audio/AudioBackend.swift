import OffstageCore

/// What to play.
public struct AudioPlayerRequest: Sendable, Hashable {
    /// The audio file.
    public var path: String
    public var role: AudioRole
    /// The owning app's name, shown by the sound server (`application.name`).
    public var appName: String
    /// Play the file over and over until stopped (a ringtone).
    public var looping: Bool

    public init(path: String, role: AudioRole = .music, appName: String, looping: Bool = false) {
        self.path = path
        self.role = role
        self.appName = appName
        self.looping = looping
    }
}

/// A playback engine: the PulseAudio one (``PulseAudioBackend``) or the
/// virtual one (``VirtualAudioBackend``), with the same behaviour.
///
/// Players start paused: create one, then ``play(_:)`` it. What the server
/// does to them (interruptions, route changes, the end of the file) arrives
/// on ``events``, which one consumer reads.
public protocol AudioBackend: Sendable {
    /// Everything the backend reports, in order.
    var events: AsyncStream<AudioEvent> { get }

    /// Opens the file and creates a paused player for it.
    /// - Throws: ``AudioError``: the file is missing, not audio or corrupt,
    ///   or no server is connected.
    func makePlayer(_ request: AudioPlayerRequest) throws(AudioError) -> AudioPlayerID
    func play(_ id: AudioPlayerID) throws(AudioError)
    func pause(_ id: AudioPlayerID) throws(AudioError)
    /// Stops the player and forgets it.
    func stop(_ id: AudioPlayerID) throws(AudioError)
    /// Moves the play position (clamped to the file).
    func seek(_ id: AudioPlayerID, to position: Duration) throws(AudioError)
    /// Sets the volume, linear from 0 to 1.
    func setVolume(_ id: AudioPlayerID, _ volume: Double) throws(AudioError)
    /// The play position, from the server's timing.
    func position(_ id: AudioPlayerID) throws(AudioError) -> Duration
    /// The state of a player.
    func state(_ id: AudioPlayerID) throws(AudioError) -> AudioPlayerMachine.State
    /// The output streams go to now.
    /// - Throws: ``AudioError`` when the server cannot be asked, or has no
    ///   output at all (`streamFailed`: nothing can play).
    func route() throws(AudioError) -> AudioRoute
    /// Removes the headphones output: streams move to the speaker and pause.
    func unplugHeadphones() throws(AudioError)
    /// Adds the headphones output: streams move to it and go on playing.
    func plugHeadphones() throws(AudioError)
}
