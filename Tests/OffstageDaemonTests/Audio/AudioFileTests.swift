import CPulse
import Foundation
import OffstageCore
import Testing
@testable import OffstageDaemon

/// A fixture under samples/fixtures/audio.
func audioFixture(_ name: String) -> String {
    repositoryRoot.appendingPathComponent("samples/fixtures/audio/\(name)").path
}

/// Writes the first `fraction` of a fixture's bytes to a new file.
func truncatedCopy(of name: String, keeping fraction: Double, in dir: URL) throws -> String {
    let data = try Data(contentsOf: URL(fileURLWithPath: audioFixture(name)))
    let url = dir.appendingPathComponent("cut-\(name)")
    try data.prefix(Int(Double(data.count) * fraction)).write(to: url)
    return url.path
}

/// `clip.mp3` without its first frame, the Xing header that states its
/// length, after `tagged` bytes of an ID3v2 picture (cover art).
func clipMP3WithoutXing(tagged: Int = 0, in dir: URL) throws -> String {
    let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: audioFixture("clip.mp3"))))
    // MPEG-2 layer III: 72 × bit rate ÷ sample rate bytes a frame, plus the padding bit.
    let kilobits = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
    let xing = 72 * kilobits[Int(data[2] >> 4)] * 1000 / 22050 + Int(data[2] >> 1 & 1)
    var tag: [UInt8] = []
    if tagged > 0 {
        let picture = Array("\u{0}image/jpeg\u{0}\u{3}\u{0}".utf8) + [UInt8](repeating: 0xAA, count: tagged)
        let frame = Array("APIC".utf8) + (0..<4).map { UInt8(picture.count >> (8 * (3 - $0)) & 0xFF) } + [0, 0] + picture
        let size = (0..<4).map { UInt8(frame.count >> (7 * (3 - $0)) & 0x7F) }
        tag = Array("ID3".utf8) + [3, 0, 0] + size + frame
    }
    let url = dir.appendingPathComponent("noxing-\(tagged).mp3")
    try Data(tag + data[xing...]).write(to: url)
    return url.path
}

/// `clip.flac` with the total-samples field of its STREAMINFO zeroed: a
/// length unknown, as an encoder writing to a pipe leaves it.
func clipFLACOfUnknownLength(in dir: URL) throws -> String {
    var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: audioFixture("clip.flac"))))
    // "fLaC", the block header, 10 bytes of sizes, 20 bits of rate, 3 of channels, 5 of bits, then 36 bits of total.
    data[21] &= 0xF0
    for index in 22..<26 { data[index] = 0 }
    let url = dir.appendingPathComponent("unknown-length.flac")
    try Data(data).write(to: url)
    return url.path
}

/// Reads `file` from where it stands in `chunk`-frame reads, to its end
/// or its first decoding error: the frames read, and that error.
func readToTheEnd(_ file: AudioFile, chunk: Int = 4096) -> (frames: Int, error: AudioError?) {
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk * file.bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    var total = 0
    do throws(AudioError) {
        while true {
            let n = try file.read(into: buffer, frames: chunk)
            if n == 0 { return (total, nil) }
            total += n
        }
    } catch {
        return (total, error)
    }
}

/// Takes everything a feeder decodes from `file`, as the player does,
/// to the end or the first error: the bytes taken, and the error.
func decodedThroughAFeeder(_ file: sending AudioFile) async -> (bytes: Int, error: AudioError?) {
    let arrived = AsyncStream<Void>.makeStream()
    let feeder = AudioFeeder(file: file, looping: false) { arrived.continuation.yield() }
    defer { feeder.stop() }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var total = 0
    var events = arrived.stream.makeAsyncIterator()
    while true {
        let take = buffer.withUnsafeMutableBytes { feeder.take(into: $0.baseAddress!, maximum: $0.count) }
        total += take.bytes
        // Not waiting for another notice after the error: none may come.
        if take.error != nil || take.finished { return (total, take.error) }
        if take.bytes == 0 { await events.next() }
    }
}

/// Writes a WAV of `seconds` of silence at `rate` Hz (mono, 16-bit by
/// default; `frames` overrides `seconds`). 8-bit silence is 128. With a
/// `channelMask` it is a WAVE_FORMAT_EXTENSIBLE file naming its channels
/// (0x33: front left, front right, back left, back right).
func silentWAV(
    rate: Int, seconds: Int = 2, channels: Int = 1, bits: Int = 16, frames: Int? = nil, channelMask: Int? = nil, in dir: URL
) throws -> String {
    func le(_ value: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8((value >> (8 * $0)) & 0xff) } }
    let frame = bits / 8 * channels
    let data = (frames ?? rate * seconds) * frame
    // The extension: its size, the valid bits, the mask, and the PCM subformat's GUID.
    let pcmGUID: [UInt8] = [1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71]
    let extensible = channelMask.map { le(22, 2) + le(bits, 2) + le($0, 4) + pcmGUID } ?? []
    var wav = Array("RIFF".utf8) + le(36 + extensible.count + data, 4) + Array("WAVEfmt ".utf8) + le(16 + extensible.count, 4)
    wav += le(channelMask == nil ? 1 : 0xFFFE, 2) + le(channels, 2)
    wav += le(rate, 4) + le(rate * frame, 4) + le(frame, 2) + le(bits, 2) + extensible + Array("data".utf8) + le(data, 4)
    wav += [UInt8](repeating: bits == 8 ? 128 : 0, count: data)
    let url = dir.appendingPathComponent("silence-\(rate)-\(channels)\(channelMask.map { "-\($0)" } ?? "").wav")
    try Data(wav).write(to: url)
    return url.path
}

@Suite struct AudioFileTests {
    /// 8 Hz never ended on PulseAudio, 20 Hz ended 0.35 s early, and above
    /// 384 kHz the server refuses the stream: both backends refuse such a
    /// file when a player is made. Opened for `audio info`, it is described.
    @Test func aSampleRateTheEngineDoesNotPlayIsRefusedForPlayback() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for rate in [8, 999, 400_000] {
            let path = try silentWAV(rate: rate, in: dir)
            #expect(try AudioFile(path: path).sampleRate == rate)
            let error = #expect(throws: AudioError.self) {
                try VirtualAudioBackend().makePlayer(AudioPlayerRequest(path: path, appName: "Radio"))
            }
            #expect(error?.code == .notAudio)
            #expect(error?.message == "\(path): its sample rate, \(rate) Hz, is not one the engine plays (1000 to 384000 Hz)")
        }
        for rate in [1_000, 384_000] {
            #expect(try AudioFile.forPlayback(path: try silentWAV(rate: rate, in: dir)).sampleRate == rate)
        }
    }


    /// A file that names its channels (here a WAVE_FORMAT_EXTENSIBLE
    /// channel mask) has that map, in PulseAudio's positions, as `paplay`
    /// has it. A quad file (L, R, Ls, Rs) had libpulse's default map for
    /// four channels, AIFF's order (front-left, front-center, front-right,
    /// rear-center): its right channel played in the centre, its back left
    /// on the right, and a 5.1 file's LFE on the right. A file naming none
    /// keeps the default (nil).
    @Test func aFileThatNamesItsChannelsHasItsOwnMap() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cases: [(channels: Int, mask: Int?, map: String?)] = [
            (4, 0x33, "front-left,front-right,rear-left,rear-right"),
            (6, 0x3F, "front-left,front-right,front-center,lfe,rear-left,rear-right"),
            (8, 0x63F, "front-left,front-right,front-center,lfe,rear-left,rear-right,side-left,side-right"),
            (4, nil, nil),
        ]
        for (channels, mask, map) in cases {
            let file = try AudioFile(path: try silentWAV(rate: 48_000, seconds: 1, channels: channels, channelMask: mask, in: dir))
            let names = file.channelPositions?.map { String(cString: pa_channel_position_to_string($0)) }
            #expect(names?.joined(separator: ",") == map, "\(channels) channels, mask \(String(describing: mask))")
        }
    }

    @Test(arguments: ["clip.wav", "clip.flac", "clip.ogg", "clip.mp3"])
    func everyFixtureFormatDecodesToTheEnd(name: String) throws {
        let file = try AudioFile(path: audioFixture(name))
        #expect(file.sampleRate == 22050)
        #expect(file.channels == 1)
        #expect(abs(file.duration.seconds - 5) < 0.01, "\(file.summary)")
        let decoded = readToTheEnd(file)
        #expect(decoded.error == nil && decoded.frames == file.frames, "\(String(describing: decoded.error))")
    }

    @Test func sixteenBitSourcesDecodeToInt16AndCompressedOnesToFloat() throws {
        #expect(try AudioFile(path: audioFixture("clip.wav")).sampleKind == .int16)
        #expect(try AudioFile(path: audioFixture("clip.flac")).sampleKind == .int16)
        #expect(try AudioFile(path: audioFixture("clip.ogg")).sampleKind == .float32)
        #expect(try AudioFile(path: audioFixture("clip.mp3")).sampleKind == .float32)
    }

    @Test func aMissingFileIsNamed() throws {
        let error = #expect(throws: AudioError.self) { try AudioFile(path: "/nonexistent/song.ogg") }
        #expect(error?.code == .fileNotFound)
        #expect(error?.message.contains("/nonexistent/song.ogg") == true)
    }

    /// A symbolic link loop was "no such file": a file that cannot be
    /// reached for another reason says it, in the system's words.
    @Test func aFileThatCannotBeReachedSaysWhy() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let loop = dir.appendingPathComponent("loop.wav").path
        #expect(symlink(loop, loop) == 0)
        let error = #expect(throws: AudioError.self) { try AudioFile(path: loop) }
        #expect(error?.code == .fileNotFound)
        #expect(error?.message == "\(loop): cannot open: Too many levels of symbolic links")
    }

    /// A file of a few frames showed as "0 s" long, which reads as empty
    /// (a file of none is refused): under half a millisecond, the length
    /// shown is the frame count.
    @Test func aFileOfAFewFramesShowsItsFrameCount() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (frames, length) in [(1, "1 frame"), (16, "16 frames"), (23, "0.001 s")] {
            let file = try AudioFile(path: try silentWAV(rate: 44_100, frames: frames, in: dir))
            #expect(file.summary == "WAV (Microsoft), 44100 Hz, 1 channel, \(length)")
        }
    }

    /// Only a container chunk longer in the header than in the file is a
    /// file cut short. Any "should be" in libsndfile's log was: an 8-bit
    /// mono WAV of an odd number of frames (its data chunk "should be an
    /// even number of bytes"), a FORM one byte short, a wrong Bytes/sec
    /// and a streamed WAV's unknown sizes were refused as truncated.
    @Test func onlyAChunkLongerThanTheFileIsTruncation() throws {
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds("RIFF : 220536 (should be 29992)\ndata : 220500 (should be 29956)"))
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds(" SSND : 220508 (should be 29920)"))
        // AU's and RF64's labels are two words: such a cut file was accepted.
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds("  Data Size   : 88200 (should be 1000)"))
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds("Riff size : 88236 (should be 1036)"))
        // Only a 32-bit chunk has streaming placeholders: a cut RF64 or W64 of 6 GB is truncated,
        // and so is a WAV whose size is merely large.
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds("Riff size : 6000000000 (should be 441096)"))
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds("riff : 6000000000 (should be 441104)"))
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds("data : 2500000000 (should be 441000)"))
        // Each format's own placeholder, and only its header bytes above it: a WAV's data of
        // 0x7F000400 or 0x80000800 was taken for a placeholder.
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds("data : 2130707456 (should be 441000)"))
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds("data : 2147485696 (should be 441000)"))
        #expect(AudioFile.headerClaimsMoreThanTheFileHolds("SSND : 2147479552 (should be 441000)"))
        for log in [
            "*** 'data' chunk should be an even number of bytes in length.", "FORM : 22131 (should be 22132)",
            "  Bytes/sec     : 176000 (should be 176400)", "data : 4294967295 (should be 176400)",
            "RIFF : 2147479624 (should be 44144)", "FORM : 2130706512 (should be 44152)",
            "data : 2147479552 (should be 44100)", "SSND : 2130706440 (should be 44108)",
        ] {
            #expect(!AudioFile.headerClaimsMoreThanTheFileHolds(log), "\(log)")
        }
        // A real one: 8-bit mono, 22,050 Hz, 22,051 frames (an odd data chunk, no pad byte).
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let frames = 22_051
        let path = try silentWAV(rate: 22_050, bits: 8, frames: frames, in: dir)
        let file = try AudioFile(path: path)
        #expect(file.frames == frames)
        // A cut AU (big-endian header: 16-bit mono, 44,100 Hz, 88,200 bytes said, 1,000 there).
        func be(_ value: Int) -> [UInt8] { (0..<4).reversed().map { UInt8((value >> (8 * $0)) & 0xff) } }
        let au = dir.appendingPathComponent("cut.au").path
        try Data(Array(".snd".utf8) + be(24) + be(88_200) + be(3) + be(44_100) + be(1) + [UInt8](repeating: 0, count: 1_000))
            .write(to: URL(fileURLWithPath: au))
        #expect(#expect(throws: AudioError.self) { try AudioFile(path: au) }?.message.contains("truncated") == true)
    }

    /// sox writing to a pipe cannot seek back to fill in the sizes, and
    /// leaves its placeholders (0x7FFFF000 in a WAV, 0x7F000000 in an
    /// AIFF) in the header: libsndfile and paplay play such a file whole,
    /// but it was refused as truncated (only 0xFFFFFFFF counted as unknown).
    @Test(arguments: ["wav", "aiff"])
    func aFileSoxStreamedToAPipeIsNotTruncated(type: String) throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("piped.\(type)").path
        let sox = Process()
        // Through a pipe, which sox cannot seek (to a file it can, and fills in the sizes);
        // pipefail makes a sox failure the status, not cat's success.
        sox.executableURL = URL(fileURLWithPath: "/bin/bash")
        sox.arguments = ["-o", "pipefail", "-c", "sox -q -n -r 22050 -c 1 -b 16 -t \(type) - synth 1 sine 440 | cat > '\(path)'"]
        try sox.run()
        sox.waitUntilExit()
        #expect(sox.terminationStatus == 0)
        let file = try AudioFile(path: path)
        #expect(file.frames == 22_050)
        #expect(file.log.contains("should be"), "not a streamed header: \(file.log)")
    }

    @Test func aFileThatIsNotAudioIsRefused() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = try write("hello, not a song\n", to: "song.ogg", in: dir)
        let error = #expect(throws: AudioError.self) { try AudioFile(path: text) }
        #expect(error?.code == .notAudio)
        #expect(error?.message.hasPrefix(text) == true)
        #expect(#expect(throws: AudioError.self) { try AudioFile(path: dir.path) }?.code == .notAudio)
        // A FIFO nobody writes: refused at once (libsndfile waited on it for good).
        let fifo = dir.appendingPathComponent("song.wav").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let pipe = #expect(throws: AudioError.self) { try AudioFile(path: fifo) }
        #expect(pipe?.message == "\(fifo): not a regular file (a pipe or a device), not an audio file")
        // Bytes in no format: libsndfile's own text blamed a pipe.
        let noise = try write(String(repeating: "\u{7}x", count: 5000), to: "noise.mp3", in: dir)
        let unknown = #expect(throws: AudioError.self) { try AudioFile(path: noise) }
        #expect(unknown?.message == "\(noise): not an audio file libsndfile can read (no format it knows)")
        // An empty file was "not an audio file libsndfile can read (Format not recognised.)".
        let empty = try write("", to: "empty.wav", in: dir)
        #expect(#expect(throws: AudioError.self) { try AudioFile(path: empty) }?.message == "\(empty): is empty, not an audio file")
        let short = try write("RIFF", to: "short.wav", in: dir)
        #expect(#expect(throws: AudioError.self) { try AudioFile(path: short) }?.message.hasSuffix(".)") == false)
    }

    @Test(arguments: ["clip.wav", "clip.flac", "clip.ogg"])
    func aTruncatedFileIsCorrupt(name: String) throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try truncatedCopy(of: name, keeping: 0.5, in: dir)
        let error = #expect(throws: AudioError.self) { try AudioFile(path: path) }
        #expect(error?.code == .corrupt, "\(String(describing: error))")
        #expect(error?.message.hasPrefix(path) == true)
    }

    @Test(arguments: ["clip.wav", "clip.flac", "clip.ogg", "clip.mp3"])
    func aFileCutInsideItsHeaderIsRefused(name: String) throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try truncatedCopy(of: name, keeping: 0.001, in: dir)
        let error = #expect(throws: AudioError.self) { try AudioFile(path: path) }
        #expect(error?.code == .corrupt || error?.code == .notAudio, "\(String(describing: error))")
    }

    /// A FLAC whose STREAMINFO leaves its length unknown (0, as an
    /// encoder writing to a pipe does) was refused as "truncated or
    /// corrupt (libsndfile cannot find its end)": libsndfile counts it
    /// SF_COUNT_MAX frames. Its frames are counted at open; it decodes to
    /// that count, and a seek to its end (which libFLAC refuses for such
    /// a file) leaves nothing to read. A truncated Ogg, of unknown length
    /// to libsndfile too, is still refused (``aTruncatedFileIsCorrupt(name:)``).
    @Test func aFLACOfUnknownLengthHasItsCountedLength() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try AudioFile(path: try clipFLACOfUnknownLength(in: dir))
        #expect(file.frames == 110_250, "\(file.summary)")
        let decoded = readToTheEnd(file)
        #expect(decoded.error == nil && decoded.frames == file.frames, "\(String(describing: decoded.error))")
        var buffer = [UInt8](repeating: 0, count: 4096 * file.bytesPerFrame)
        try file.seek(toFrame: file.frames)
        #expect(try buffer.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, frames: 4096) } == 0)
        try file.seek(toFrame: file.frames - 10)
        #expect(try buffer.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, frames: 4096) } == 10)
        // Cut in half, it no longer decodes to its end: refused at open, as a cut FLAC of known length is.
        let whole = try Data(contentsOf: URL(fileURLWithPath: file.path))
        let cut = dir.appendingPathComponent("cut-unknown-length.flac")
        try whole.prefix(whole.count / 2).write(to: cut)
        let error = #expect(throws: AudioError.self) { try AudioFile(path: cut.path) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.hasPrefix("\(cut.path): truncated or corrupt (its header leaves its length unknown") == true, "\(String(describing: error))")
    }

    @Test func aTruncatedMP3FailsWhenDecodingReachesTheCut() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try truncatedCopy(of: "clip.mp3", keeping: 0.5, in: dir)
        let failure = await decodedThroughAFeeder(try AudioFile(path: path)).error
        #expect(failure?.code == .corrupt)
        #expect(failure?.message.hasPrefix("\(path): the audio stops at ") == true, "\(String(describing: failure))")
        #expect(failure?.message.hasSuffix(" s of 5 s (truncated or corrupt there)") == true, "\(String(describing: failure))")
    }

    /// Without a Xing header libsndfile guesses an MP3's length from its
    /// size, cover art included: this 5 s file was 28 s long to it, and
    /// ended `truncated` at 5 s. Its frames are counted instead.
    @Test func anMP3WithoutAXingHeaderBehindCoverArtHasItsCountedLength() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try clipMP3WithoutXing(tagged: 300_000, in: dir)
        let file = try AudioFile(path: path)
        // 194 frames of 576 (no encoder delay or padding left out without the header).
        #expect(file.frames == 194 * 576, "\(file.summary)")
        let expected = file.frames * file.bytesPerFrame
        let decoded = await decodedThroughAFeeder(file)
        #expect(decoded.error == nil, "\(String(describing: decoded.error))")
        #expect(decoded.bytes == expected)
    }

    /// Of variable bit rate and without a Xing header, the same file is
    /// 2.55 s long to libsndfile, which reads no further: refused, rather
    /// than cut short in silence.
    @Test func anMP3LibsndfileWouldCutShortIsRefused() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try clipMP3WithoutXing(in: dir)
        let error = #expect(throws: AudioError.self) { try AudioFile(path: path) }
        #expect(error?.code == .notAudio)
        #expect(
            error?.message
                == "\(path): libsndfile would play only its first 2.551 s of 5.068 s (an MP3 without a Xing header, whose length it guesses "
                + "from its size and first frame: of variable bit rate, as a rule); re-encode it, or add the header (vbrfix)")
        // With its header, the length is the header's (the encoder's delay and padding left out).
        #expect(try AudioFile(path: audioFixture("clip.mp3")).frames == 110_250)
    }

    /// libsndfile returns the frames a read decoded before damage, with
    /// its error set: thrown at once, they were lost (0.25 s before
    /// `failed`, with the decoder's chunk). Read in large chunks, as many
    /// frames come before the error as in small ones.
    @Test func theFramesBeforeDamageAreReadBeforeTheError() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: audioFixture("clip.flac"))))
        for i in 0..<3000 { bytes[bytes.count / 2 + i] = UInt8((i * 37 + 11) & 0xff) }
        let damaged = dir.appendingPathComponent("damaged.flac")
        try Data(bytes).write(to: damaged)
        func framesBeforeTheError(chunk: Int) throws -> Int {
            let decoded = readToTheEnd(try AudioFile(path: damaged.path), chunk: chunk)
            let error = try #require(decoded.error, "no decoding error")
            #expect(error.code == .corrupt && error.message.hasPrefix("\(damaged.path): cannot be decoded ("), "\(error)")
            return decoded.frames
        }
        let small = try framesBeforeTheError(chunk: 1024)
        #expect(small > 22_050, "the damage is in the middle of 5 s: \(small) frames before it")
        #expect(try framesBeforeTheError(chunk: 30_000) == small)
    }

    @Test func everyFixtureDecodesInTheFeederWithoutError() async throws {
        for name in ["clip.wav", "clip.flac", "clip.ogg", "clip.mp3"] {
            let file = try AudioFile(path: audioFixture(name))
            let expected = file.frames * file.bytesPerFrame
            let tolerance = file.endTolerance * file.bytesPerFrame
            let decoded = await decodedThroughAFeeder(file)
            #expect(decoded.error == nil, "\(name): \(String(describing: decoded.error))")
            #expect(abs(decoded.bytes - expected) <= tolerance, "\(name)")
        }
    }

    @Test func theSupportedFormatsIncludeTheFourThatMatter() {
        let formats = AudioFile.supportedFormats.joined(separator: "\n")
        for name in ["WAV", "FLAC", "OGG", "MPEG-1/2 Audio"] { #expect(formats.contains(name), "\(formats)") }
        // Header-less files need their format given; AudioFile cannot open one.
        #expect(!formats.contains("RAW"), "\(formats)")
    }
}
