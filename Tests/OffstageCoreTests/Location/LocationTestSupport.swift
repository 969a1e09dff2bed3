import Foundation
import OffstageCore

/// A coordinate offset from `origin` by metres north and east (good to a
/// millimetre at test distances).
func offset(_ origin: LocationCoordinate, north: Double, east: Double) -> LocationCoordinate {
    let phi = origin.latitude * .pi / 180
    let m = LocationGeodesy.meridionalRadius(latitude: phi)
    let n = LocationGeodesy.primeVerticalRadius(latitude: phi)
    var lat = origin.latitude + north / m * 180 / .pi
    // Refine with the mean latitude for the longitude scale.
    let mean = (phi + lat * .pi / 180) / 2
    lat = origin.latitude + north / LocationGeodesy.meridionalRadius(latitude: mean) * 180 / .pi
    let lon = origin.longitude + east / (LocationGeodesy.primeVerticalRadius(latitude: mean) * cos(mean)) * 180 / .pi
    _ = n
    return LocationCoordinate(latitude: lat, longitude: lon)
}

/// A fix `north` metres north of `origin` at `time`.
func fix(_ origin: LocationCoordinate, north: Double, east: Double = 0, at time: Double) -> LocationFix {
    let c = offset(origin, north: north, east: east)
    return LocationFix(latitude: c.latitude, longitude: c.longitude, time: time)
}

let paris = LocationCoordinate(latitude: 48.8566, longitude: 2.3522)

/// A deterministic pseudo-random generator (SplitMix64).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
