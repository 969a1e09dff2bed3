/// The spatial index of the region monitor: a uniform latitude/longitude
/// grid whose cells list the regions whose box overlaps them.
///
/// A region is indexed by the box of its *enter zone* (the circle a device
/// must reach to enter it); regions the device is inside, or about to
/// change, are tracked separately by the monitor. A lookup is one hash of
/// the fix's cell. Boxes that would cover more than ``maximumCellsPerEntry``
/// cells go to a short list checked on every lookup instead.
struct LocationRegionGrid: Sendable {
    /// Above this many cells an entry goes to the wide list.
    static let maximumCellsPerEntry = 1_024

    /// A region in a cell, with its box inline (in `Float`, rounded
    /// outwards, so it stays conservative) so that most candidates are
    /// rejected without touching the region's own storage.
    struct Entry: Sendable {
        var slot: Int32
        var minLatitude: Float
        var maxLatitude: Float
        var minLongitude: Float
        var maxLongitude: Float

        init(slot: Int32, box: LocationBoundingBox) {
            self.slot = slot
            minLatitude = Float(box.minLatitude).nextDown
            maxLatitude = Float(box.maxLatitude).nextUp
            minLongitude = Float(box.minLongitude).nextDown
            maxLongitude = Float(box.maxLongitude).nextUp
        }

        /// Whether the box contains a point; handles boxes crossing ±180°.
        @inline(__always)
        func contains(latitude: Float, longitude: Float) -> Bool {
            guard latitude >= minLatitude, latitude <= maxLatitude else { return false }
            if longitude >= minLongitude && longitude <= maxLongitude { return true }
            if minLongitude < -180 { return longitude >= minLongitude + 360 }
            if maxLongitude > 180 { return longitude <= maxLongitude - 360 }
            return false
        }
    }

    let cellSize: Double
    private let longitudeCells: Int
    private(set) var cells: [Int64: [Entry]] = [:]
    private(set) var wide: [Int32] = []

    init(cellSizeDegrees: Double) {
        precondition(cellSizeDegrees > 0 && cellSizeDegrees <= 10, "cell size must be in (0, 10] degrees")
        cellSize = cellSizeDegrees
        longitudeCells = Int((360 / cellSizeDegrees).rounded(.up))
    }

    @inline(__always)
    private func latitudeIndex(_ latitude: Double) -> Int {
        Int(((latitude + 90) / cellSize).rounded(.down))
    }

    @inline(__always)
    private func longitudeIndex(_ longitude: Double) -> Int {
        let i = Int(((longitude + 180) / cellSize).rounded(.down))
        let m = i % longitudeCells
        return m < 0 ? m + longitudeCells : m
    }

    @inline(__always)
    private func key(_ latIndex: Int, _ lonIndex: Int) -> Int64 {
        Int64(latIndex) << 32 | Int64(lonIndex)
    }

    /// Every cell key a box touches, or nil if it is too wide for cells.
    private func keys(of box: LocationBoundingBox) -> [Int64]? {
        if box.coversAllLongitudes { return nil }
        let lat0 = latitudeIndex(box.minLatitude), lat1 = latitudeIndex(box.maxLatitude)
        let lonStart = Int(((box.minLongitude + 180) / cellSize).rounded(.down))
        let lonEnd = Int(((box.maxLongitude + 180) / cellSize).rounded(.down))
        let count = (lat1 - lat0 + 1) * (lonEnd - lonStart + 1)
        if count > Self.maximumCellsPerEntry { return nil }
        var result: [Int64] = []
        result.reserveCapacity(count)
        for la in lat0...lat1 {
            for raw in lonStart...lonEnd {
                let m = raw % longitudeCells
                result.append(key(la, m < 0 ? m + longitudeCells : m))
            }
        }
        return result
    }

    mutating func insert(_ slot: Int32, box: LocationBoundingBox) {
        lastKey = .min
        lastEntries = nil
        guard let keys = keys(of: box) else {
            wide.append(slot)
            return
        }
        for k in keys { cells[k, default: []].append(Entry(slot: slot, box: box)) }
    }

    mutating func remove(_ slot: Int32, box: LocationBoundingBox) {
        lastKey = .min
        lastEntries = nil
        guard let keys = keys(of: box) else {
            if let i = wide.firstIndex(of: slot) { wide.remove(at: i) }
            return
        }
        for k in keys {
            guard var list = cells.removeValue(forKey: k) else { continue }
            if let i = list.firstIndex(where: { $0.slot == slot }) { list.remove(at: i) }
            if !list.isEmpty { cells[k] = list }
        }
    }

    /// The last cell looked up, and its entries: a moving device stays in
    /// one cell for several fixes. Cleared by every change to the grid.
    private var lastKey: Int64 = .min
    private var lastEntries: [Entry]?

    /// The entries of the point's cell (a superset of the regions whose
    /// box contains it).
    @inline(__always)
    mutating func candidates(latitude: Double, longitude: Double) -> [Entry]? {
        let k = key(latitudeIndex(latitude), longitudeIndex(longitude))
        if k == lastKey { return lastEntries }
        lastKey = k
        lastEntries = cells[k]
        return lastEntries
    }
}
