import CPulse
import CSndFile
import Foundation
import OffstageCore

/// An audio file opened for decoding with libsndfile: WAV, FLAC,
/// Ogg/Vorbis, MP3 and the other formats Debian's libsndfile reads.
///
/// Opening checks the file to the end (its last frames can be read, a WAV
/// data chunk is as long as its header says), so a truncated file is
/// refused at once rather than stopping short mid-play; a cut MP3 is
/// reported when playback reaches the cut. An MP3 whose length no header
/// states gets the length its frames add up to, or is refused when that is
/// more than libsndfile will read (``MPEGLength``). Decoding gives
/// interleaved 16-bit samples for 8- and 16-bit sources, 32-bit floats for
/// the rest (as `paplay` does).
///
/// Not thread-safe: one thread decodes at a time.
public final class AudioFile {
    /// The sample format decoded frames come in.
    public enum SampleKind: Sendable, Hashable {
        case int16
        case float32
        /// Bytes per sample.
        public var size: Int { self == .int16 ? 2 : 4 }
    }

    public let path: String
    /// The container, as libsndfile names it ("WAV (Microsoft)", "OGG (OGG Container format)", …).
    public let formatName: String
    public let sampleRate: Int
    public let channels: Int
    public let frames: Int
    public let sampleKind: SampleKind
    /// Where each channel plays, in PulseAudio's positions, as the file
    /// names them (a WAV's WAVE_FORMAT_EXTENSIBLE channel mask, a CAF or
    /// AIFF channel layout); nil when it names none, or names one PulseAudio
    /// has no position for (Ambisonic B-format): the stream then has
    /// libpulse's default map. `paplay` does the same.
    public let channelPositions: [pa_channel_position_t]?
    private let formatCode: Int32
    private let handle: OpaquePointer

    /// Bytes per interleaved frame of decoded audio.
    public var bytesPerFrame: Int { channels * sampleKind.size }

    /// How long the file plays.
    public var duration: Duration { .nanoseconds(Int64(frames) * 1_000_000_000 / Int64(sampleRate)) }

    /// Opens and checks a file.
    /// - Throws: ``AudioError`` with code `fileNotFound`, `notAudio` or
    ///   `corrupt`; the message names the file.
    public init(path: String) throws(AudioError) {
        self.path = path
        switch FileKind(atPath: path) {
        case nil:
            // Missing, or not reachable: a symbolic link loop was "no such
            // file". FileKind's stat just failed, and errno says why.
            let reason = errno
            guard reason == ENOENT else {
                throw AudioError(.fileNotFound, "\(path): cannot open: \(String(cString: strerror(reason)))")
            }
            throw AudioError(.fileNotFound, "\(path): no such file")
        case .directory: throw AudioError(.notAudio, "\(path): is a directory, not an audio file")
        case .regular: break
        default:
            // A pipe or a device: libsndfile would wait on it (for good, on a
            // FIFO nobody writes), and playback seeks.
            throw AudioError(.notAudio, "\(path): not a regular file (a pipe or a device), not an audio file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw AudioError(.fileNotFound, "\(path): not readable (permission denied)")
        }
        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            var reason = String(cString: sf_strerror(nil))
            // libsndfile says this of bytes in no format it knows (MP3 decoding
            // found no frame); the file was checked to be regular above.
            if reason.contains("is not a regular file") { reason = "no format it knows" }
            if fileSize(atPath: path) == 0 {
                throw AudioError(.notAudio, "\(path): is empty, not an audio file")
            }
            // Its own sentence's full stop ("Format not recognised.") ends ours too early.
            if reason.hasSuffix(".") { reason.removeLast() }
            throw AudioError(.notAudio, "\(path): not an audio file libsndfile can read (\(reason))")
        }
        // A FLAC's STREAMINFO may leave the length unknown (0: an encoder
        // writing to a pipe does), and libsndfile then says SF_COUNT_MAX.
        // Other formats of unknown length (a cut Ogg) are refused by check().
        var libsndfileFrames = Int(info.frames)
        let countedFLAC = libsndfileFrames == Int(Int64.max) && info.format & Int32(SF_FORMAT_TYPEMASK) == Int32(SF_FORMAT_FLAC)
        if countedFLAC {
            switch Self.decodedFrames(handle, channels: Int(info.channels)) {
            case .success(let count): libsndfileFrames = count
            case .failure(let error):
                sf_close(handle)
                throw AudioError(
                    .corrupt,
                    "\(path): truncated or corrupt (its header leaves its length unknown, and decoding it to count its frames fails at "
                        + "\(formatSeconds(Double(error.frame) / Double(info.samplerate))) s: \(error.reason))")
            }
        }
        self.handle = handle
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        channelPositions = Self.channelPositions(handle, channels: channels)
        // For an MP3 without a header stating its length, the frames it holds.
        let countedMPEGFrames =
            Self.isMPEG(info.format) ? MPEGLength.countedFrames(path: path, libsndfileFrames: libsndfileFrames) : nil
        // libsndfile reads no further than its count: a longer one counted is refused by check().
        frames = min(libsndfileFrames, countedMPEGFrames ?? libsndfileFrames)
        formatName = Self.majorFormatName(info.format)
        formatCode = info.format
        switch info.format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_PCM_16),
            Int32(SF_FORMAT_ULAW), Int32(SF_FORMAT_ALAW):
            sampleKind = .int16
        default:
            sampleKind = .float32
        }
        // A FLAC counted by decoding it whole has shown its last frames decode.
        try check(tail: !countedFLAC, countedMPEGFrames: countedMPEGFrames)
    }

    deinit { sf_close(handle) }

    /// Where decoding failed, and libsndfile's reason.
    private struct DecodingFailure: Error {
        let frame: Int
        let reason: String
    }

    /// The frames a file holds, counted by decoding it to its end, and the
    /// decoding position back at the start. For a FLAC of unknown length:
    /// 0.11 s of CPU for five minutes of 44.1 kHz 16-bit stereo noise,
    /// 0.26 s at 96 kHz 24-bit.
    private static func decodedFrames(_ handle: OpaquePointer, channels: Int) -> Result<Int, DecodingFailure> {
        guard channels > 0 else { return .success(0) }  // refused by check()
        var scratch = [Float](repeating: 0, count: channels * 4096)
        var count = 0
        while true {
            let read = scratch.withUnsafeMutableBufferPointer { sf_readf_float(handle, $0.baseAddress, 4096) }
            if read < 0 || sf_error(handle) != 0 {
                // The frames read with the error decoded before the damage.
                return .failure(DecodingFailure(frame: count + max(0, Int(read)), reason: String(cString: sf_strerror(handle))))
            }
            if read == 0 { break }
            count += Int(read)
        }
        guard sf_seek(handle, 0, SEEK_SET) == 0 else {
            return .failure(DecodingFailure(frame: 0, reason: "it cannot seek back to the start"))
        }
        return .success(count)
    }

    /// The file's channel map (libsndfile's `SFC_GET_CHANNEL_MAP_INFO`) in
    /// PulseAudio's positions; nil without one, or with a position
    /// PulseAudio has none for.
    private static func channelPositions(_ handle: OpaquePointer, channels: Int) -> [pa_channel_position_t]? {
        var map = [Int32](repeating: 0, count: channels)
        guard sf_command(handle, Int32(SFC_GET_CHANNEL_MAP_INFO), &map, Int32(channels * MemoryLayout<Int32>.size)) != 0 else {
            return nil
        }
        var positions: [pa_channel_position_t] = []
        for channel in map {
            // libsndfile tells left from front left, and centre from front centre; PulseAudio does not.
            switch Int(channel) {
            case SF_CHANNEL_MAP_MONO: positions.append(PA_CHANNEL_POSITION_MONO)
            case SF_CHANNEL_MAP_LEFT, SF_CHANNEL_MAP_FRONT_LEFT: positions.append(PA_CHANNEL_POSITION_FRONT_LEFT)
            case SF_CHANNEL_MAP_RIGHT, SF_CHANNEL_MAP_FRONT_RIGHT: positions.append(PA_CHANNEL_POSITION_FRONT_RIGHT)
            case SF_CHANNEL_MAP_CENTER, SF_CHANNEL_MAP_FRONT_CENTER: positions.append(PA_CHANNEL_POSITION_FRONT_CENTER)
            case SF_CHANNEL_MAP_REAR_CENTER: positions.append(PA_CHANNEL_POSITION_REAR_CENTER)
            case SF_CHANNEL_MAP_REAR_LEFT: positions.append(PA_CHANNEL_POSITION_REAR_LEFT)
            case SF_CHANNEL_MAP_REAR_RIGHT: positions.append(PA_CHANNEL_POSITION_REAR_RIGHT)
            case SF_CHANNEL_MAP_LFE: positions.append(PA_CHANNEL_POSITION_LFE)
            case SF_CHANNEL_MAP_FRONT_LEFT_OF_CENTER: positions.append(PA_CHANNEL_POSITION_FRONT_LEFT_OF_CENTER)
            case SF_CHANNEL_MAP_FRONT_RIGHT_OF_CENTER: positions.append(PA_CHANNEL_POSITION_FRONT_RIGHT_OF_CENTER)
            case SF_CHANNEL_MAP_SIDE_LEFT: positions.append(PA_CHANNEL_POSITION_SIDE_LEFT)
            case SF_CHANNEL_MAP_SIDE_RIGHT: positions.append(PA_CHANNEL_POSITION_SIDE_RIGHT)
            case SF_CHANNEL_MAP_TOP_CENTER: positions.append(PA_CHANNEL_POSITION_TOP_CENTER)
            case SF_CHANNEL_MAP_TOP_FRONT_LEFT: positions.append(PA_CHANNEL_POSITION_TOP_FRONT_LEFT)
            case SF_CHANNEL_MAP_TOP_FRONT_RIGHT: positions.append(PA_CHANNEL_POSITION_TOP_FRONT_RIGHT)
            case SF_CHANNEL_MAP_TOP_FRONT_CENTER: positions.append(PA_CHANNEL_POSITION_TOP_FRONT_CENTER)
            case SF_CHANNEL_MAP_TOP_REAR_LEFT: positions.append(PA_CHANNEL_POSITION_TOP_REAR_LEFT)
            case SF_CHANNEL_MAP_TOP_REAR_RIGHT: positions.append(PA_CHANNEL_POSITION_TOP_REAR_RIGHT)
            case SF_CHANNEL_MAP_TOP_REAR_CENTER: positions.append(PA_CHANNEL_POSITION_TOP_REAR_CENTER)
            default: return nil  // invalid, or Ambisonic B-format
            }
        }
        return positions
    }

    /// The sample rates the engine plays. PulseAudio takes none above
    /// 384 kHz (`PA_RATE_MAX`); below about 200 Hz its resampling to the
    /// sink's rate loses the last frames, so a file ended early (7 frames,
    /// 0.35 s, at 20 Hz) or never (8 Hz). 1 kHz leaves a margin, and no
    /// real recording is slower (telephony is 8 kHz).
    public static let playableSampleRates = 1_000...384_000

    /// The channel counts the engine plays: PulseAudio's `PA_CHANNELS_MAX`.
    public static let playableChannels = 1...32

    /// Opens and checks a file for playback: ``init(path:)``, a sample
    /// rate within ``playableSampleRates`` and a channel count within
    /// ``playableChannels`` (with code `notAudio`), in the virtual backend
    /// as in the real one.
    public static func forPlayback(path: String) throws(AudioError) -> AudioFile {
        let file = try AudioFile(path: path)
        guard playableChannels.contains(file.channels) else {
            throw AudioError(
                .notAudio, "\(path): it has \(file.channels) channels; the engine plays up to \(playableChannels.upperBound)")
        }
        guard playableSampleRates.contains(file.sampleRate) else {
            throw AudioError(
                .notAudio,
                "\(path): its sample rate, \(file.sampleRate) Hz, is not one the engine plays "
                    + "(\(playableSampleRates.lowerBound) to \(playableSampleRates.upperBound) Hz)")
        }
        return file
    }

    /// Whether libsndfile's log says a size in the header is larger than
    /// what the file holds (`data : 220500 (should be 29956)`): a file cut
    /// short. Any "should be" was taken for that, and refused valid files:
    /// an odd-sized `data` chunk (an 8- or 24-bit mono WAV of an odd
    /// number of frames: "should be an even number of bytes"), a `FORM`
    /// one byte short, a wrong `Bytes/sec`, and a streamed file's unknown
    /// sizes (``isUnknownSize(_:label:)``).
    static func headerClaimsMoreThanTheFileHolds(_ log: String) -> Bool {
        log.split(whereSeparator: \.isNewline).contains { line in
            // "label : stated (should be real)", the label as each format's reader names its size.
            let halves = line.split(separator: " : ", maxSplits: 1)
            guard halves.count == 2, sizeLabels.contains(halves[0].trimmingCharacters(in: .whitespaces)) else { return false }
            let numbers = halves[1].split(whereSeparator: { $0 == " " || $0 == "(" || $0 == ")" })
            guard numbers.count == 4, numbers[1] == "should", numbers[2] == "be",
                let stated = UInt64(numbers[0]), let real = UInt64(numbers[3]),
                !isUnknownSize(stated, label: halves[0].trimmingCharacters(in: .whitespaces))
            else { return false }
            return stated > real
        }
    }

    /// Whether a 32-bit chunk's stated size is a streaming writer's "not
    /// known yet": 0xFFFFFFFF, or sox's placeholders when it cannot seek
    /// back (a pipe): 0x7FFFF000 in a WAV (`data`; `RIFF` 0x48 more) and
    /// 0x7F000000 in an AIFF (`SSND` and `FORM` a few header bytes more),
    /// each within 256 bytes. RF64's and W64's 64-bit sizes have none: a
    /// large cut file of theirs is truncated.
    static func isUnknownSize(_ stated: UInt64, label: String) -> Bool {
        let placeholder: UInt64
        switch label {
        case "RIFF", "RIFX", "data": placeholder = 0x7FFF_F000
        case "FORM", "SSND": placeholder = 0x7F00_0000
        default: return false
        }
        return stated == 0xFFFF_FFFF || (placeholder...placeholder + 0x100).contains(stated)
    }

    /// The sizes libsndfile (1.2) checks against the file: WAV and AIFF
    /// chunks, AU's data size, 8SVX's BODY, W64's riff, RF64's Riff size.
    static let sizeLabels: Set<String> = ["RIFF", "RIFX", "data", "FORM", "SSND", "Data Size", "BODY", "riff", "Riff size"]

    /// - Parameter tail: whether to check that the last frames decode.
    private func check(tail checkingTheTail: Bool, countedMPEGFrames: Int?) throws(AudioError) {
        // libsndfile reads up to 1024 channels (SF_MAX_CHANNELS): a file of
        // 33 is described, and refused for playback (``forPlayback(path:)``),
        // not called corrupt.
        guard sampleRate > 0, channels > 0, channels <= 1024 else {
            throw AudioError(.corrupt, "\(path): corrupt header (\(sampleRate) Hz, \(channels) channels)")
        }
        guard frames != Int(Int64.max) else {
            throw AudioError(.corrupt, "\(path): truncated or corrupt (libsndfile cannot find its end)")
        }
        guard frames > 0 else { throw AudioError(.corrupt, "\(path): holds no audio") }
        if let counted = countedMPEGFrames, counted > frames {
            let rate = Double(sampleRate)
            throw AudioError(
                .notAudio,
                "\(path): libsndfile would play only its first \(formatSeconds(Double(frames) / rate)) s of "
                    + "\(formatSeconds(Double(counted) / rate)) s (an MP3 without a Xing header, whose length it guesses "
                    + "from its size and first frame: of variable bit rate, as a rule); re-encode it, or add the header (vbrfix)")
        }
        if Self.headerClaimsMoreThanTheFileHolds(log) {
            throw AudioError(.corrupt, "\(path): truncated (the file is shorter than its header says)")
        }
        // The last frames must decode: a file cut short fails here. Not for
        // MP3: libmpg123 prints bit-reservoir errors on stderr after any
        // seek, even in good files; a cut MP3 is caught when playback
        // reaches the cut (``AudioFeeder``).
        if isMPEG || !checkingTheTail { return }
        var scratch = [Float](repeating: 0, count: channels * 64)
        let tail = max(0, frames - 64)
        let read = sf_seek(handle, sf_count_t(tail), SEEK_SET) == tail
            ? scratch.withUnsafeMutableBufferPointer { sf_readf_float(handle, $0.baseAddress, sf_count_t(frames - tail)) } : -1
        guard read == frames - tail, sf_error(handle) == 0 else {
            throw AudioError(.corrupt, "\(path): truncated or corrupt (its last frames, at \(formatSeconds(Double(tail) / Double(sampleRate))) s, cannot be decoded)")
        }
        guard sf_seek(handle, 0, SEEK_SET) == 0 else {
            throw AudioError(.corrupt, "\(path): cannot seek back to the start")
        }
    }

    /// Whether the file is MPEG audio (MP3).
    public var isMPEG: Bool { Self.isMPEG(formatCode) }

    private static func isMPEG(_ format: Int32) -> Bool { format & Int32(SF_FORMAT_TYPEMASK) == Int32(SF_FORMAT_MPEG) }

    /// The frames a decoder may come short of the header's count at the
    /// end of a sound file (MP3 encoder padding) before the file counts as
    /// truncated.
    public var endTolerance: Int { max(2304, frames / 100) }

    /// libsndfile's log for this file (header warnings).
    public var log: String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = sf_command(handle, Int32(SFC_GET_LOG_INFO), &buffer, Int32(buffer.count))
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Decodes up to `frames` frames into `buffer` (interleaved, in
    /// ``sampleKind``).
    /// - Returns: the frames decoded; 0 at the end of the file.
    /// - Throws: ``AudioError`` `corrupt` when decoding fails. The frames
    ///   a read decoded before the damage are returned first, and the
    ///   error comes with the next read: thrown at once, they were lost
    ///   (a quarter of a second of the decoder's chunk).
    public func read(into buffer: UnsafeMutableRawPointer, frames count: Int) throws(AudioError) -> Int {
        if let damage {
            self.damage = nil
            throw damage
        }
        if atEnd { return 0 }
        let n: sf_count_t
        switch sampleKind {
        case .int16: n = sf_readf_short(handle, buffer.assumingMemoryBound(to: Int16.self), sf_count_t(count))
        case .float32: n = sf_readf_float(handle, buffer.assumingMemoryBound(to: Float.self), sf_count_t(count))
        }
        if n < 0 || sf_error(handle) != 0 {
            let error = AudioError(.corrupt, "\(path): cannot be decoded (\(String(cString: sf_strerror(handle))))")
            guard n > 0 else { throw error }
            damage = error
        }
        return Int(n)
    }

    /// A decoding error met after a read's first frames, for the next read.
    private var damage: AudioError?
    /// Seeked to the end: reads give nothing until the next seek.
    private var atEnd = false

    /// Moves the decoding position to `frame` (clamped to the file). The
    /// end needs no decoder position: libFLAC refuses a seek to the end of
    /// a FLAC of unknown length.
    public func seek(toFrame frame: Int) throws(AudioError) {
        damage = nil
        let target = min(max(0, frame), frames)
        atEnd = target == frames
        if atEnd { return }
        guard sf_seek(handle, sf_count_t(target), SEEK_SET) == target else {
            throw AudioError(.corrupt, "\(path): cannot seek to frame \(target)")
        }
    }

    /// The frame at a position.
    public func frame(at position: Duration) -> Int {
        min(frames, max(0, Int(position.nanoseconds * Int64(sampleRate) / 1_000_000_000)))
    }

    /// A one-line description: "FLAC, 44100 Hz, 2 channels, 3.0 s".
    public var summary: String {
        "\(formatName), \(sampleRate) Hz, \(channels) channel\(channels == 1 ? "" : "s"), \(length)"
    }

    /// How long the file plays, as shown: seconds to the millisecond
    /// ("3.5 s"), or the frames when that rounds to nothing ("16 frames"):
    /// "0 s" read as an empty file.
    public var length: String {
        let seconds = formatSeconds(duration.seconds)
        return seconds == "0" ? "\(frames) frame\(frames == 1 ? "" : "s")" : seconds + " s"
    }

    private static func majorFormatName(_ format: Int32) -> String {
        var info = SF_FORMAT_INFO()
        info.format = format & Int32(SF_FORMAT_TYPEMASK)
        guard sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
            let name = info.name
        else { return "unknown format" }
        return String(cString: name)
    }

    /// The major formats this libsndfile build reads, by name: all but
    /// header-less RAW, which needs its rate, channels and encoding given
    /// and which an ``AudioFile`` cannot open.
    public static var supportedFormats: [String] {
        var count: Int32 = 0
        _ = sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR_COUNT), &count, Int32(MemoryLayout<Int32>.size))
        return (0..<count).compactMap { index in
            var info = SF_FORMAT_INFO()
            info.format = index
            guard sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
                info.format != Int32(SF_FORMAT_RAW), let name = info.name
            else { return nil }
            let ext = info.extension.map { String(cString: $0) } ?? ""
            return "\(String(cString: name)) (.\(ext))"
        }
    }
}
