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

    /// The ring's bytes: touched only with `state` locked.
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
        let thread = Thread { [self] in decodeLoop() }
        thread.name = "offstage-audio-decoder"
        thread.start()
    }

    deinit { ring.deallocate() }

    /// Copies up to `maximum` bytes (whole frames) of decoded audio.
    /// Called by the consumer; never waits for the decoder.
    func take(into destination: UnsafeMutableRawPointer, maximum: Int) -> Take {
        var signal = false
        let result = state.withLock { s -> Take in
            let wanted = min(maximum - maximum % bytesPerFrame, s.count)
            let first = min(wanted, capacity - s.read)
            destination.copyMemory(from: ring + s.read, byteCount: first)
            if wanted > first { (destination + first).copyMemory(from: ring, byteCount: wanted - first) }
            s.read = (s.read + wanted) % capacity
            s.count -= wanted
            if wanted == 0, !s.endOfFile, s.error == nil { s.consumerStarved = true }
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
    /// means the file was cut.
    private func checkComplete(_ frame: Int) throws(AudioError) {
        guard file.frames - frame > file.endTolerance else { return }
        let rate = Double(file.sampleRate)
        throw AudioError(
            .corrupt,
            "\(file.path): truncated: the audio stops at \(formatSeconds(Double(frame) / rate)) s of \(formatSeconds(Double(file.frames) / rate)) s")
    }

    private let hasExitedFlag = Mutex(false)

    /// Whether the decoder thread has exited.
    var hasExited: Bool { hasExitedFlag.withLock { $0 } }

    /// Waits until the decoder thread has exited (after ``stop()``).
    func waitUntilStopped() {
        if !hasExited { exited.wait() }
    }

    private func decodeLoop() {
        defer {
            hasExitedFlag.withLock { $0 = true }
            exited.signal()
        }
        /// Where the decoder is in the file, in frames.
        var decoded = 0
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: chunkFrames * bytesPerFrame, alignment: 16)
        defer { scratch.deallocate() }
        while true {
            // Decide what to do, under the lock.
            enum Step { case stop, wait, decode(generation: Int, seek: Int?) }
            let step = state.withLock { s -> Step in
                if s.stopped { return .stop }
                if s.seekTo == nil, s.endOfFile || s.error != nil || capacity - s.count < chunkFrames * bytesPerFrame {
                    s.decoderWaiting = true
                    return .wait
                }
                defer { s.seekTo = nil }
                return .decode(generation: s.generation, seek: s.seekTo)
            }
            guard case .decode(let generation, let seek) = step else {
                if case .stop = step { return }
                wake.wait()
                continue
            }
            // Decode outside the lock.
            var frames = 0
            var failure: AudioError?
            var atEnd = false
            do throws(AudioError) {
                if let seek {
                    try file.seek(toFrame: seek)
                    decoded = min(seek, file.frames)
                }
                frames = try file.read(into: scratch, frames: chunkFrames)
                if frames == 0 { try checkComplete(decoded) }
                if frames == 0, looping {
                    try file.seek(toFrame: 0)
                    decoded = 0
                    frames = try file.read(into: scratch, frames: chunkFrames)
                }
                decoded += frames
                atEnd = frames == 0
            } catch {
                failure = error
            }
            let notify = state.withLock { s -> Bool in
                guard s.generation == generation, !s.stopped else { return false }
                let bytes = frames * bytesPerFrame
                var write = (s.read + s.count) % capacity
                var left = bytes
                var from = scratch
                while left > 0 {
                    let n = min(left, capacity - write)
                    (ring + write).copyMemory(from: from, byteCount: n)
                    from += n
                    left -= n
                    write = (write + n) % capacity
                }
                s.count += bytes
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
