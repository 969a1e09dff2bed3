/// An event and the time it happened.
public struct TimedAudioEvent: Sendable, Hashable {
    public var time: ClockTime
    public var event: AudioEvent
    public init(time: ClockTime, event: AudioEvent) {
        self.time = time
        self.event = event
    }
}

/// A sound server in virtual time, with the behaviour of the PulseAudio
/// setup Offstage runs (role-cork policy, a speaker and a headphones
/// output): playback positions follow the injected time, the end of a file
/// arrives exactly when its last frame would have played, a `phone` player
/// interrupts every `music` player, and unplugging the headphones moves the
/// streams to the speaker and pauses them.
///
/// Every input carries its time. Time first advances to it, so the ends
/// due before it are reported first, in order; the returned events are
/// what happened up to and including the input.
///
/// ```swift
/// var server = VirtualAudioServer()
/// let id = server.makePlayer(duration: .seconds(3), role: .music, at: .zero).id
/// try server.play(id, at: .zero)                       // [started]
/// server.advance(to: ClockTime(seconds: 3))            // [ended at 3 s]
/// ```
public struct VirtualAudioServer: Sendable {
    struct Player: Sendable {
        var machine: AudioPlayerMachine
        var duration: Duration
        var looping: Bool
        /// Position when playback last stopped or was moved.
        var base: Duration = .zero
        /// When playback (re)started, while playing.
        var playingSince: ClockTime?
        var volume: Double = 1
    }

    public private(set) var now: ClockTime
    /// Whether the headphones output exists (plugged in).
    public private(set) var headphonesPlugged: Bool
    private var players: [AudioPlayerID: Player] = [:]
    private var nextID = 1
    /// Whether a call (a playing `phone` player, or an injected one) has
    /// the music interrupted.
    private var callActive = false
    private var injectedCall = false

    public init(now: ClockTime = .zero, headphonesPlugged: Bool = false) {
        self.now = now
        self.headphonesPlugged = headphonesPlugged
    }

    /// The output streams go to.
    public var route: AudioRoute { headphonesPlugged ? .headphones : .speaker }

    /// The players that exist, in creation order.
    public var playerIDs: [AudioPlayerID] { players.keys.sorted() }

    // MARK: Players

    /// Creates a corked player for a file of `duration`. A `music` player
    /// created during a call is interrupted at once, as role-cork does.
    /// - Returns: its id, and what happened up to then (ends due before
    ///   `time`, the new player's interruption).
    public mutating func makePlayer(duration: Duration, role: AudioRole, looping: Bool = false, at time: ClockTime)
        -> (id: AudioPlayerID, events: [TimedAudioEvent])
    {
        var events = advance(to: time)
        let id = AudioPlayerID(nextID)
        nextID += 1
        var machine = AudioPlayerMachine(role: role)
        let actions = callActive ? machine.corkRequested() : []
        players[id] = Player(machine: machine, duration: duration, looping: looping)
        events += perform(actions, on: id)
        return (id, events)
    }

    public mutating func play(_ id: AudioPlayerID, at time: ClockTime) throws(AudioError) -> [TimedAudioEvent] {
        try request(id, at: time) { machine throws(AudioPlayerMachine.Refusal) in try machine.play() }
    }

    public mutating func pause(_ id: AudioPlayerID, at time: ClockTime) throws(AudioError) -> [TimedAudioEvent] {
        try request(id, at: time) { machine throws(AudioPlayerMachine.Refusal) in try machine.pause() }
    }

    /// Moves the play position (clamped to the file).
    public mutating func seek(_ id: AudioPlayerID, to position: Duration, at time: ClockTime) throws(AudioError)
        -> [TimedAudioEvent]
    {
        guard position >= .zero else { throw AudioError(.invalidArgument, "\(id): cannot seek to a negative position") }
        let events = advance(to: time)
        guard var player = players[id] else { throw .noSuchPlayer(id) }
        do { try player.machine.seek() } catch { throw .refused(id, error) }
        player.base = min(position, player.duration)
        if player.playingSince != nil { player.playingSince = time }
        players[id] = player
        return events
    }

    public mutating func setVolume(_ id: AudioPlayerID, _ volume: Double, at time: ClockTime) throws(AudioError)
        -> [TimedAudioEvent]
    {
        guard (0...1).contains(volume) else { throw AudioError(.invalidArgument, "volume \(volume) is not within 0…1") }
        let events = advance(to: time)
        guard players[id] != nil else { throw .noSuchPlayer(id) }
        players[id]!.volume = volume
        return events
    }

    /// Stops and forgets a player.
    public mutating func stop(_ id: AudioPlayerID, at time: ClockTime) throws(AudioError) -> [TimedAudioEvent] {
        var events = advance(to: time)
        guard var player = players.removeValue(forKey: id) else { throw .noSuchPlayer(id) }
        _ = player.machine.stop()
        events += updateCall()
        return events
    }

    /// The play position of a player.
    public func position(_ id: AudioPlayerID) throws(AudioError) -> Duration {
        guard let player = players[id] else { throw .noSuchPlayer(id) }
        return Self.position(of: player, at: now)
    }

    /// The state of a player.
    public func state(_ id: AudioPlayerID) throws(AudioError) -> AudioPlayerMachine.State {
        guard let player = players[id] else { throw .noSuchPlayer(id) }
        return player.machine.state
    }

    public func volume(_ id: AudioPlayerID) throws(AudioError) -> Double {
        guard let player = players[id] else { throw .noSuchPlayer(id) }
        return player.volume
    }

    // MARK: Injected server behaviour

    /// A call starts outside any player: every `music` player is interrupted.
    public mutating func beginInterruption(at time: ClockTime) -> [TimedAudioEvent] {
        var events = advance(to: time)
        injectedCall = true
        events += updateCall()
        return events
    }

    /// The injected call ends. `shouldResume: false` models an interruption
    /// by another app's non-mixable audio.
    public mutating func endInterruption(shouldResume: Bool, at time: ClockTime) -> [TimedAudioEvent] {
        var events = advance(to: time)
        injectedCall = false
        events += updateCall(shouldResume: shouldResume)
        return events
    }

    /// The headphones go away: streams move to the speaker, playing ones pause.
    public mutating func unplugHeadphones(at time: ClockTime) -> [TimedAudioEvent] {
        var events = advance(to: time)
        guard headphonesPlugged else { return events }
        headphonesPlugged = false
        events += moveAll(from: .headphones, to: .speaker, oldDeviceGone: true, newDeviceAppeared: false)
        return events
    }

    /// Headphones appear and take over; playback goes on.
    public mutating func plugHeadphones(at time: ClockTime) -> [TimedAudioEvent] {
        var events = advance(to: time)
        guard !headphonesPlugged else { return events }
        headphonesPlugged = true
        events += moveAll(from: .speaker, to: .headphones, oldDeviceGone: false, newDeviceAppeared: true)
        return events
    }

    /// The server dies and comes back: every player is gone.
    public mutating func resetMediaServices(at time: ClockTime) -> [TimedAudioEvent] {
        var events = advance(to: time)
        players.removeAll()
        callActive = false
        injectedCall = false
        events.append(TimedAudioEvent(time: now, event: .disconnected("the virtual server was reset")))
        events.append(TimedAudioEvent(time: now, event: .mediaServicesReset))
        return events
    }

    // MARK: Time

    /// When the next player reaches its end, if one is playing.
    public var nextDeadline: ClockTime? {
        players.values.compactMap(Self.endTime).min()
    }

    /// Moves time forward to `time`, reporting each end in order.
    public mutating func advance(to time: ClockTime) -> [TimedAudioEvent] {
        var events: [TimedAudioEvent] = []
        while let (id, end) = players.compactMap({ id, p in Self.endTime(p).map { (id, $0) } })
            .min(by: { ($0.1, $0.0) < ($1.1, $1.0) }), end <= time
        {
            now = max(now, end)
            var player = players[id]!
            player.base = player.duration
            player.playingSince = nil
            let actions = player.machine.drained()
            players[id] = player
            events += perform(actions, on: id)
            events += updateCall()
        }
        now = max(now, time)
        return events
    }

    // MARK: Helpers

    private static func position(of player: Player, at time: ClockTime) -> Duration {
        guard let since = player.playingSince else { return player.base }
        return (player.base + (time - since)).position(inFileOf: player.duration, looping: player.looping)
    }

    private static func endTime(_ player: Player) -> ClockTime? {
        guard let since = player.playingSince, !player.looping else { return nil }
        return since + (player.duration - player.base)
    }

    private mutating func request(
        _ id: AudioPlayerID, at time: ClockTime,
        _ body: (inout AudioPlayerMachine) throws(AudioPlayerMachine.Refusal) -> [AudioPlayerMachine.Action]
    ) throws(AudioError) -> [TimedAudioEvent] {
        var events = advance(to: time)
        guard var player = players[id] else { throw .noSuchPlayer(id) }
        let actions: [AudioPlayerMachine.Action]
        do { actions = try body(&player.machine) } catch { throw .refused(id, error) }
        players[id] = player
        events += perform(actions, on: id)
        events += updateCall()
        return events
    }

    /// Carries out a machine's actions on the virtual stream.
    private mutating func perform(_ actions: [AudioPlayerMachine.Action], on id: AudioPlayerID) -> [TimedAudioEvent] {
        var events: [TimedAudioEvent] = []
        for action in actions {
            guard var player = players[id] else { break }
            switch action {
            case .cork:
                player.base = Self.position(of: player, at: now)
                player.playingSince = nil
                players[id] = player
            case .uncork:
                if player.playingSince == nil { player.playingSince = now }
                players[id] = player
                // The virtual server accepts audio at once.
                events += perform(player.machine.started(), on: id)
            case .rewind:
                player.base = .zero
                players[id] = player
            case .emit(let event):
                events.append(TimedAudioEvent(time: now, event: .player(id, event)))
            }
        }
        return events
    }

    /// Applies the role-cork policy after anything that may start or end a
    /// call: music is interrupted while a phone player plays or an
    /// injected call is on.
    private mutating func updateCall(shouldResume: Bool = true) -> [TimedAudioEvent] {
        let active = injectedCall || players.values.contains { $0.machine.role == .phone && $0.machine.state == .playing }
        guard active != callActive else { return [] }
        callActive = active
        var events: [TimedAudioEvent] = []
        for id in playerIDs where players[id]!.machine.role == .music {
            var machine = players[id]!.machine
            let actions = active ? machine.corkRequested() : machine.uncorkRequested(shouldResume: shouldResume)
            players[id]!.machine = machine
            events += perform(actions, on: id)
        }
        return events
    }

    private mutating func moveAll(from: AudioRoute, to: AudioRoute, oldDeviceGone: Bool, newDeviceAppeared: Bool)
        -> [TimedAudioEvent]
    {
        var events: [TimedAudioEvent] = []
        for id in playerIDs {
            var machine = players[id]!.machine
            let actions = machine.moved(from: from, to: to, oldDeviceGone: oldDeviceGone, newDeviceAppeared: newDeviceAppeared)
            players[id]!.machine = machine
            events += perform(actions, on: id)
        }
        return events
    }
}
