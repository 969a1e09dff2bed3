/// Region monitoring for every subscriber, with Core Location's semantics.
///
/// - Regions are circles keyed by identifier per subscriber; re-adding an
///   identifier replaces the region. At most
///   ``LocationRegionMonitorConfiguration/maximumRegionsPerSubscriber`` per
///   subscriber; radii are clamped to the maximum monitoring distance.
/// - A region's state is decided at registration from the latest known fix
///   (inside if within the radius), without an enter event; with no fix yet
///   it is `unknown` until the next fix decides it (`didDetermineState`).
/// - Entering needs the device at least the hysteresis distance inside the
///   boundary (at most half the radius) and exiting at least the hysteresis
///   distance outside, for the dwell time of fix time in a row. Then the
///   monitor emits `didEnter`/`didExit` (if the region asks for it) followed
///   by `didDetermineState`.
///
/// The monitor is a value: feed it fixes with ``process(_:into:)`` and
/// perform the events it returns. All regions of all subscribers sit in one
/// grid index, so a fix costs a lookup of its cell plus the regions the
/// device is in or near a transition of — not a pass over every region.
///
/// ```swift
/// var monitor = LocationRegionMonitor()
/// _ = monitor.startMonitoring(region, for: "com.example.geo")
/// let events = monitor.process(fix)
/// ```
public struct LocationRegionMonitor: Sendable {
    /// How a fix is checked against the regions.
    public enum Strategy: Sendable {
        /// Through the spatial index (the default).
        case indexed
        /// Every region, one by one: the naive baseline, same results.
        case exhaustive
    }

    /// A region's fixed geometry, kept apart from its state so that the
    /// hot path reads a compact array and writes nothing until a region is
    /// actually reached.
    struct Geometry: Sendable {
        var metric: LocationLocalMetric
        var innerSquared: Double
        var radiusSquared: Double
        var outerSquared: Double
        var innerRadius: Double
        var outerRadius: Double
        var enterBox: LocationBoundingBox
        var outerBox: LocationBoundingBox
        var usesGeodesicDistance: Bool
    }

    /// A region's identity and state.
    struct Slot: Sendable {
        var subscriber: LocationSubscriberID
        var region: LocationCircularRegion
        var state: LocationRegionState
        var pendingSince: Double?
        var trackedPosition: Int
        var isLive: Bool
    }

    /// The configuration in force.
    public let configuration: LocationRegionMonitorConfiguration
    /// The most recent fix processed.
    public private(set) var latestFix: LocationFix?

    private var slots: [Slot] = []
    private var geometry: [Geometry] = []
    private var freeSlots: [Int32] = []
    private var bySubscriber: [LocationSubscriberID: [String: Int32]] = [:]
    private var grid: LocationRegionGrid
    /// A region checked on every fix, unless it provably has nothing to do.
    struct TrackedRegion: Sendable {
        var slot: Int32
        /// While the odometer is below this, the device cannot have crossed
        /// the next threshold of the region (its exit band when inside, back
        /// out of the past-band zone while a transition is pending)...
        var skipUntilOdometer: Double
        /// ...and while fix time is below this, no pending transition can
        /// complete its dwell. Together: skip the region.
        var skipUntilTime: Double

        init(slot: Int32) {
            self.slot = slot
            skipUntilOdometer = -.infinity
            skipUntilTime = -.infinity
        }
    }

    private var tracked: [TrackedRegion] = []
    /// One bit per slot: tracked or not (read in the hot loop without
    /// touching the slot).
    private var trackedBits: [UInt64] = []
    /// Distance travelled, summed fix to fix: an upper bound on how far the
    /// device can be from where it was at any earlier fix.
    private var odometer = 0.0
    /// A distance slack made safe against the distance approximations and
    /// the odometer's summed rounding (1 m plus 0.01 %).
    @inline(__always)
    private static func safe(_ slack: Double) -> Double { slack - 1 - slack * 1e-4 }
    private var scratch: [TrackedRegion] = []

    /// Creates an empty monitor.
    public init(configuration: LocationRegionMonitorConfiguration = .init()) {
        self.configuration = configuration
        grid = LocationRegionGrid(cellSizeDegrees: configuration.cellSizeDegrees)
    }

    /// Number of regions monitored, over all subscribers.
    public var regionCount: Int { slots.count - freeSlots.count }

    /// Number of regions currently checked on every fix (inside, unknown, or
    /// waiting out the dwell time).
    public var trackedRegionCount: Int { tracked.count }

    // MARK: Registration

    /// Starts monitoring a region for a subscriber, replacing any region of
    /// that subscriber with the same identifier.
    ///
    /// - Returns: `.monitoring` with the state known now, or `.failed` with
    ///   `tooManyRegions` (the subscriber is at the limit and the identifier
    ///   is new) or `invalidRegion`.
    public mutating func startMonitoring(
        _ region: LocationCircularRegion, for subscriber: LocationSubscriberID
    ) -> LocationRegionRegistration {
        guard region.center.isValid, region.radius.isFinite, region.radius > 0 else {
            return .failed(region: region, failure: .invalidRegion)
        }
        var region = region
        region.radius = min(region.radius, configuration.maximumRadius)
        let existing = bySubscriber[subscriber]?[region.identifier]
        if existing == nil, (bySubscriber[subscriber]?.count ?? 0) >= configuration.maximumRegionsPerSubscriber {
            return .failed(region: region, failure: .tooManyRegions)
        }
        if let existing { removeSlot(existing) }

        let slot = Slot(subscriber: subscriber, region: region, state: .unknown, pendingSince: nil,
                        trackedPosition: -1, isLive: true)
        let shape = makeGeometry(region)
        let index: Int32
        if let free = freeSlots.popLast() {
            index = free
            slots[Int(free)] = slot
            geometry[Int(free)] = shape
        } else {
            index = Int32(slots.count)
            slots.append(slot)
            geometry.append(shape)
            if slots.count > trackedBits.count * 64 { trackedBits.append(0) }
        }
        bySubscriber[subscriber, default: [:]][region.identifier] = index
        grid.insert(index, box: shape.enterBox)
        let state = initialState(of: Int(index))
        slots[Int(index)].state = state
        if state != .outside { track(index) }
        return .monitoring(region: region, state: state)
    }

    /// Stops monitoring one region. Returns whether it was monitored.
    @discardableResult
    public mutating func stopMonitoring(identifier: String, for subscriber: LocationSubscriberID) -> Bool {
        guard let index = bySubscriber[subscriber]?[identifier] else { return false }
        removeSlot(index)
        return true
    }

    /// Stops every region of a subscriber.
    public mutating func removeSubscriber(_ subscriber: LocationSubscriberID) {
        guard let map = bySubscriber[subscriber] else { return }
        for index in map.values { removeSlot(index) }
    }

    /// The regions a subscriber monitors, sorted by identifier.
    public func monitoredRegions(for subscriber: LocationSubscriberID) -> [LocationCircularRegion] {
        (bySubscriber[subscriber] ?? [:]).values.map { slots[Int($0)].region }
            .sorted { $0.identifier < $1.identifier }
    }

    /// Every monitored region with its subscriber, sorted (for persisting
    /// regions across restarts: register them again on start).
    public var allRegions: [LocationMonitoredRegion] {
        bySubscriber.flatMap { subscriber, map in
            map.values.map { LocationMonitoredRegion(subscriber: subscriber, region: slots[Int($0)].region) }
        }.sorted { ($0.subscriber, $0.region.identifier) < ($1.subscriber, $1.region.identifier) }
    }

    /// The current state of a region, or nil if it is not monitored.
    public func state(of identifier: String, for subscriber: LocationSubscriberID) -> LocationRegionState? {
        bySubscriber[subscriber]?[identifier].map { slots[Int($0)].state }
    }

    /// `requestStateForRegion:`: a `didDetermineState` event with the
    /// current state, or nil if the region is not monitored.
    public func requestState(identifier: String, for subscriber: LocationSubscriberID) -> LocationRegionEvent? {
        guard let state = state(of: identifier, for: subscriber) else { return nil }
        return LocationRegionEvent(
            subscriber: subscriber, identifier: identifier,
            kind: .didDetermineState(state), time: latestFix?.time)
    }

    // MARK: Fixes

    /// Processes a fix and returns the events it causes, sorted by
    /// subscriber and identifier.
    public mutating func process(_ fix: LocationFix, strategy: Strategy = .indexed) -> [LocationRegionEvent] {
        var events: [LocationRegionEvent] = []
        process(fix, into: &events, strategy: strategy)
        return events
    }

    /// Processes a fix, appending the events it causes to `events` (sorted
    /// by subscriber and identifier among themselves). Reuse one buffer for
    /// a stream of fixes to avoid allocating.
    public mutating func process(
        _ fix: LocationFix, into events: inout [LocationRegionEvent], strategy: Strategy = .indexed
    ) {
        if let last = latestFix { odometer += LocationGeodesy.distance(last.coordinate, fix.coordinate) }
        latestFix = fix
        let start = events.count
        let point = Point(fix)
        switch strategy {
        case .exhaustive:
            for i in slots.indices where slots[i].isLive {
                evaluate(Int32(i), at: point, into: &events)
            }
        case .indexed:
            // Backwards: evaluating a region can only untrack it, which
            // moves the last entry (already seen) into its place.
            for position in stride(from: tracked.count - 1, through: 0, by: -1) {
                let entry = tracked[position]
                if entry.skipUntilOdometer > odometer && entry.skipUntilTime > point.time { continue }
                let i = Int(entry.slot)
                let d2 = evaluate(entry.slot, at: point, into: &events)
                let now = slots[i].trackedPosition
                if now >= 0, d2.isFinite { tracked[now] = skip(for: entry.slot, distanceSquared: d2) }
            }
            if let list = grid.candidates(latitude: fix.latitude, longitude: fix.longitude) {
                let latitude = Float(point.latitude), longitude = Float(point.longitude)
                for entry in list where entry.contains(latitude: latitude, longitude: longitude) {
                    // An untracked region is outside with nothing pending:
                    // only a fix inside its enter circle concerns it.
                    // Tracked regions were evaluated above; what the first
                    // pass untracked cannot be inside its enter circle.
                    let i = Int(entry.slot)
                    guard trackedBits[i >> 6] & (1 << UInt64(i & 63)) == 0,
                        distanceSquared(i, point) <= geometry[i].innerSquared
                    else { continue }
                    evaluate(entry.slot, at: point, into: &events)
                }
            }
            for index in grid.wide where slots[Int(index)].trackedPosition < 0 {
                evaluate(index, at: point, into: &events)
            }
        }
        Self.sortNewEvents(&events, from: start)
    }

    /// The earliest fix time at which a pending enter or exit completes its
    /// dwell if the device stays where it is, or nil if none is pending.
    public var nextDeadline: Double? {
        tracked.compactMap { slots[Int($0.slot)].pendingSince }.min().map { $0 + configuration.dwell }
    }

    /// Completes every pending transition whose dwell has elapsed by `time`,
    /// assuming the device stayed at the latest fix (for a scheduler to call
    /// at ``nextDeadline`` when fixes pause).
    public mutating func advance(to time: Double, into events: inout [LocationRegionEvent]) {
        guard var fix = latestFix, time > fix.time else { return }
        fix.time = time
        let start = events.count
        let point = Point(fix)
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: tracked)
        for entry in scratch where slots[Int(entry.slot)].pendingSince != nil {
            evaluate(entry.slot, at: point, into: &events)
        }
        latestFix = fix
        Self.sortNewEvents(&events, from: start)
    }

    // MARK: Internals

    struct Point {
        let latitude: Double
        let longitude: Double
        let latitudeRadians: Double
        let longitudeRadians: Double
        let time: Double

        init(_ fix: LocationFix) {
            latitude = fix.latitude
            longitude = fix.longitude
            latitudeRadians = fix.latitude * .pi / 180
            longitudeRadians = fix.longitude * .pi / 180
            time = fix.time
        }
    }

    /// Sorts the events appended since `start` by subscriber and
    /// identifier, keeping the order of one region's events: an in-place
    /// insertion sort (a fix causes a handful of events at most).
    private static func sortNewEvents(_ events: inout [LocationRegionEvent], from start: Int) {
        guard events.count - start > 1 else { return }
        for i in (start + 1)..<events.count {
            var j = i
            while j > start {
                let a = events[j - 1], b = events[j]
                guard b.subscriber < a.subscriber || (b.subscriber == a.subscriber && b.identifier < a.identifier) else { break }
                events.swapAt(j - 1, j)
                j -= 1
            }
        }
    }

    private func makeGeometry(_ region: LocationCircularRegion) -> Geometry {
        let band = min(configuration.hysteresis, region.radius / 2)
        let inner = region.radius - band
        let outer = region.radius + configuration.hysteresis
        let outerBox = LocationBoundingBox(center: region.center, distance: outer)
        return Geometry(
            metric: LocationLocalMetric(center: region.center),
            innerSquared: inner * inner, radiusSquared: region.radius * region.radius,
            outerSquared: outer * outer, innerRadius: inner, outerRadius: outer,
            enterBox: LocationBoundingBox(center: region.center, distance: inner),
            outerBox: outerBox,
            // The local metric is good only for short distances away from the poles.
            usesGeodesicDistance: outer > LocationGeodesy.localDistanceLimit
                || max(abs(outerBox.minLatitude), abs(outerBox.maxLatitude)) > LocationGeodesy.localLatitudeLimit)
    }

    private func initialState(of index: Int) -> LocationRegionState {
        guard let fix = latestFix else { return .unknown }
        return distanceSquared(index, Point(fix)) <= geometry[index].radiusSquared ? .inside : .outside
    }

    @inline(__always)
    private func distanceSquared(_ index: Int, _ p: Point) -> Double {
        guard geometry[index].outerBox.contains(latitude: p.latitude, longitude: p.longitude) else { return .infinity }
        if geometry[index].usesGeodesicDistance {
            let d = LocationGeodesy.distance(
                slots[index].region.center, LocationCoordinate(latitude: p.latitude, longitude: p.longitude))
            return d * d
        }
        return geometry[index].metric.distanceSquared(
            latitudeRadians: p.latitudeRadians, longitudeRadians: p.longitudeRadians)
    }

    /// When a tracked region next needs a look, given its distance now:
    /// inside with nothing pending, once the device may have reached the
    /// exit band; with a transition pending, once it may have left the
    /// past-band zone or the dwell may be over. Skipping in between changes
    /// nothing: the exhaustive strategy would find nothing to do.
    private func skip(for index32: Int32, distanceSquared d2: Double) -> TrackedRegion {
        let i = Int(index32)
        var entry = TrackedRegion(slot: index32)
        let d = d2.squareRoot()
        switch (slots[i].state, slots[i].pendingSince) {
        case (.inside, nil):
            entry.skipUntilOdometer = odometer + Self.safe(geometry[i].outerRadius - d)
            entry.skipUntilTime = .infinity
        case (.inside, let since?):
            entry.skipUntilOdometer = odometer + Self.safe(d - geometry[i].outerRadius)
            entry.skipUntilTime = since + configuration.dwell
        case (.outside, let since?):
            entry.skipUntilOdometer = odometer + Self.safe(geometry[i].innerRadius - d)
            entry.skipUntilTime = since + configuration.dwell
        default:
            break
        }
        return entry
    }

    /// Runs one region's state machine for a fix; returns the squared
    /// distance it used (infinity when not computed).
    @discardableResult
    private mutating func evaluate(_ index32: Int32, at p: Point, into events: inout [LocationRegionEvent]) -> Double {
        let index = Int(index32)
        switch slots[index].state {
        case .outside:
            // Cheap reject before any arithmetic: not in the enter box.
            if slots[index].pendingSince == nil,
                !geometry[index].enterBox.contains(latitude: p.latitude, longitude: p.longitude)
            {
                return .infinity
            }
            let d2 = distanceSquared(index, p)
            step(index, pastBand: d2 <= geometry[index].innerSquared, to: .inside, at: p.time, into: &events)
            return d2
        case .inside:
            let d2 = distanceSquared(index, p)
            step(index, pastBand: d2 >= geometry[index].outerSquared, to: .outside, at: p.time, into: &events)
            return d2
        case .unknown:
            let d2 = distanceSquared(index, p)
            let state: LocationRegionState = d2 <= geometry[index].radiusSquared ? .inside : .outside
            slots[index].state = state
            emit(index, .didDetermineState(state), at: p.time, into: &events)
            if state == .outside { untrack(index32) }
            return d2
        }
    }

    /// Advances one region's pending transition.
    private mutating func step(
        _ index: Int, pastBand: Bool, to target: LocationRegionState, at time: Double,
        into events: inout [LocationRegionEvent]
    ) {
        guard pastBand else {
            if slots[index].pendingSince != nil {
                slots[index].pendingSince = nil
                if slots[index].state == .outside { untrack(Int32(index)) }
            }
            return
        }
        guard let since = slots[index].pendingSince else {
            slots[index].pendingSince = time
            track(Int32(index))
            if configuration.dwell > 0 { return }
            return step(index, pastBand: true, to: target, at: time, into: &events)
        }
        guard time - since >= configuration.dwell else { return }
        slots[index].pendingSince = nil
        slots[index].state = target
        if target == .inside {
            if slots[index].region.notifyOnEntry { emit(index, .didEnter, at: time, into: &events) }
        } else {
            if slots[index].region.notifyOnExit { emit(index, .didExit, at: time, into: &events) }
            untrack(Int32(index))
        }
        emit(index, .didDetermineState(target), at: time, into: &events)
    }

    private func emit(
        _ index: Int, _ kind: LocationRegionEvent.Kind, at time: Double, into events: inout [LocationRegionEvent]
    ) {
        events.append(LocationRegionEvent(
            subscriber: slots[index].subscriber, identifier: slots[index].region.identifier,
            kind: kind, time: time))
    }

    private mutating func track(_ index: Int32) {
        guard slots[Int(index)].trackedPosition < 0 else { return }
        slots[Int(index)].trackedPosition = tracked.count
        tracked.append(TrackedRegion(slot: index))
        trackedBits[Int(index) >> 6] |= 1 << UInt64(Int(index) & 63)
    }

    private mutating func untrack(_ index: Int32) {
        let position = slots[Int(index)].trackedPosition
        guard position >= 0 else { return }
        let last = tracked.removeLast()
        if last.slot != index {
            tracked[position] = last
            slots[Int(last.slot)].trackedPosition = position
        }
        slots[Int(index)].trackedPosition = -1
        trackedBits[Int(index) >> 6] &= ~(1 << UInt64(Int(index) & 63))
    }

    private mutating func removeSlot(_ index: Int32) {
        let slot = slots[Int(index)]
        untrack(index)
        grid.remove(index, box: geometry[Int(index)].enterBox)
        bySubscriber[slot.subscriber]?[slot.region.identifier] = nil
        if bySubscriber[slot.subscriber]?.isEmpty == true { bySubscriber[slot.subscriber] = nil }
        slots[Int(index)].isLive = false
        freeSlots.append(index)
    }
}
