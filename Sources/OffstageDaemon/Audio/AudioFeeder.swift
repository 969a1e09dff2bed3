import Dispatch
import Foundation
import OffstageCore
import Synchronization

/// Decodes a file on its own thread into a ring buffer, so that the
/// sound server's callback thread only copies bytes and never waits for
/// the decoder.
///
/// The decoder fills the ring, sleeps while it is more than half full, and
/// calls `dataArrived` when the consumer found it empty (``take(into:maximum:)``
/// returned nothing) and new data came in, at the end of the file, and on
/// a decoding error.
final class AudioFeeder: Sendable {
    /// What the consumer learns from ``take(into:maximum:)``.
    struct Take {
        var bytes: Int
        /// The file has been decoded to its end and the ring is empty.
        var finished: Bool
        var error: AudioError?
    }

    private struct State: ~Copyable {
        var read = 0
        var count = 0
        var endOfFile = false
        var error: AudioError?
        var seekTo: Int?
        var generation = 0
        var consumerStarved = false
        var decoderWaiting = false
        var stopped = false
    }

    /// The ring's bytes. Positions are in `state`: the decoder writes only
    /// free space, the consumer reads only what the decoder has published.
    private nonisolated(unsafe) let ring: UnsafeMutableRawPointer
    /// Used by the decoder thread only.
    private nonisolated(unsafe) let file: AudioFile
    private let capacity: Int
    private let bytesPerFrame: Int
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let looping: Bool
    private let chunkFrames: Int
    private let dataArrived: @Sendable () -> Void

    /// Starts decoding `file` at once.
    /// - Parameters:
    ///   - buffered: how much decoded audio the ring holds.
    ///   - dataArrived: called on the decoder's thread; see the type's summary.
    init(file: sending AudioFile, looping: Bool, buffered: Duration = .seconds(1), dataArrived: @escaping @Sendable () -> Void) {
        bytesPerFrame = file.bytesPerFrame
        let frames = max(4096, Int(buffered.seconds * Double(file.sampleRate)))
        capacity = frames * bytesPerFrame
        chunkFrames = max(1024, frames / 8)
        ring = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        self.looping = looping
        self.dataArrived = dataArrived
        self.file = file
        let thread = Thread { [self] in
            // Foundation on Linux does not give the thread its name, so it
            // showed as the thread that created it (in top, perf and the
            // CPU benchmark's breakdown). Linux allows 15 characters.
            if let comm = fopen("/proc/thread-self/comm", "w") {
                fputs("offstage-decode", comm)
                fclose(comm)
            }
            decodeLoop()
        }
        thread.name = "offstage-audio-decoder"
        thread.start()
    }

    deinit { ring.deallocate() }

    /// Copies up to `maximum` bytes (whole frames) of decoded audio.
    /// Called by one consumer at a time (as is ``seek(toFrame:)``); never
    /// waits for the decoder.
    ///
    /// The copy is made outside the lock: the decoder writes only where
    /// nothing is readable, and only the consumer moves the read position.
    /// So the lock is held for a few instructions on each side, and the
    /// consumer and the decoder never wait for each other's copies.
    func take(into destination: UnsafeMutableRawPointer, maximum: Int) -> Take {
        let wholeFrames = maximum - maximum % bytesPerFrame
        // An empty ring marks the consumer starved under the same lock that
        // finds it empty, so the decoder's next publish sends a notice.
        let (start, wanted, empty) = state.withLock { s -> (Int, Int, Take?) in
            let wanted = min(wholeFrames, s.count)
            guard wanted == 0 else { return (s.read, wanted, nil) }
            if s.count == 0, !s.endOfFile, s.error == nil, wholeFrames > 0 { s.consumerStarved = true }
            return (0, 0, Take(bytes: 0, finished: s.endOfFile && s.count == 0, error: s.count == 0 ? s.error : nil))
        }
        if let empty { return empty }
        let first = min(wanted, capacity - start)
        destination.copyMemory(from: ring + start, byteCount: first)
        if wanted > first { (destination + first).copyMemory(from: ring, byteCount: wanted - first) }
        var signal = false
        let result = state.withLock { s -> Take in
            s.read = (s.read + wanted) % capacity
            s.count -= wanted
            // At the end or after an error the decoder waits for a seek, not for room.
            if s.decoderWaiting, !s.endOfFile, s.error == nil, s.count <= capacity / 2 {
                s.decoderWaiting = false
                signal = true
            }
            return Take(bytes: wanted, finished: s.endOfFile && s.count == 0, error: s.count == 0 ? s.error : nil)
        }
        if signal { wake.signal() }
        return result
    }

    /// Drops what is buffered and decodes from `frame` on.
    func seek(toFrame frame: Int) {
        let signal = state.withLock { s -> Bool in
            s.generation += 1
            s.seekTo = frame
            s.read = 0
            s.count = 0
            s.endOfFile = false
            s.error = nil
            defer { s.decoderWaiting = false }
            return s.decoderWaiting
        }
        if signal { wake.signal() }
    }

    /// Stops the decoder thread (it closes the file).
    func stop() {
        let signal = state.withLock { s -> Bool in
            s.stopped = true
            defer { s.decoderWaiting = false }
            return s.decoderWaiting
        }
        if signal { wake.signal() }
    }

    /// The decoder reached the end at `frame`: short of the header's count
    /// means the file was cut, or damaged where it stops (a decoder such as
    /// Vorbis's ends at damage without an error).
    private func checkComplete(_ frame: Int) throws(AudioError) {
        guard file.frames - frame > file.endTolerance else { return }
        let rate = Double(file.sampleRate)
        throw AudioError(
            .corrupt,
            "\(file.path): the audio stops at \(formatSeconds(Double(frame) / rate)) s of \(formatSeconds(Double(file.frames) / rate)) s (truncated or corrupt there)")
    }

    /// Waits until the decoder thread has exited (after ``stop()``).
    func waitUntilStopped() {
        exited.wait()
        exited.signal()  // for any later wait
    }

    private func decodeLoop() {
        defer { exited.signal() }
        /// Where the decoder is in the file, in frames.
        var decoded = 0
        while true {
            // Decide what to do, and where in the ring, under the lock.
            enum Step { case stop, wait, decode(generation: Int, seek: Int?, offset: Int, frames: Int) }
            let step = state.withLock { s -> Step in
                if s.stopped { return .stop }
                if s.seekTo == nil, s.endOfFile || s.error != nil || capacity - s.count < chunkFrames * bytesPerFrame {
                    s.decoderWaiting = true
                    return .wait
                }
                defer { s.seekTo = nil }
                let offset = (s.read + s.count) % capacity
                let room = min(capacity - s.count, capacity - offset)
                return .decode(generation: s.generation, seek: s.seekTo, offset: offset, frames: min(chunkFrames, room / bytesPerFrame))
            }
            guard case .decode(let generation, let seek, let offset, let wanted) = step else {
                if case .stop = step { return }
                wake.wait()
                continue
            }
            // Decode outside the lock, straight into free space of the ring:
            // the consumer reads only what has been published below.
            var frames = 0
            var failure: AudioError?
            var atEnd = false
            do throws(AudioError) {
                if let seek {
                    try file.seek(toFrame: seek)
                    decoded = min(seek, file.frames)
                }
                frames = try file.read(into: ring + offset, frames: wanted)
                if frames == 0 { try checkComplete(decoded) }
                if frames == 0, looping {
                    try file.seek(toFrame: 0)
                    decoded = 0
                    frames = try file.read(into: ring + offset, frames: wanted)
                }
                decoded += frames
                atEnd = frames == 0
            } catch {
                failure = error
            }
            let notify = state.withLock { s -> Bool in
                // A seek since dropped what was decoded (the next decode overwrites it).
                guard s.generation == generation, !s.stopped else { return false }
                s.count += frames * bytesPerFrame
                s.error = failure
                s.endOfFile = atEnd
                let starved = s.consumerStarved || atEnd || failure != nil
                s.consumerStarved = false
                return starved
            }
            if notify { dataArrived() }
        }
    }
}
