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

@Suite struct AudioFileTests {
    @Test(arguments: ["clip.wav", "clip.flac", "clip.ogg", "clip.mp3"])
    func everyFixtureFormatDecodesToTheEnd(name: String) throws {
        let file = try AudioFile(path: audioFixture(name))
        #expect(file.sampleRate == 22050)
        #expect(file.channels == 1)
        #expect(abs(file.duration.seconds - 5) < 0.01, "\(file.summary)")
        var buffer = [UInt8](repeating: 0, count: 4096 * file.bytesPerFrame)
        var total = 0
        while true {
            let n = try buffer.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, frames: 4096) }
            if n == 0 { break }
            total += n
        }
        #expect(total == file.frames)
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

    @Test func aFileThatIsNotAudioIsRefused() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = try write("hello, not a song\n", to: "song.ogg", in: dir)
        let error = #expect(throws: AudioError.self) { try AudioFile(path: text) }
        #expect(error?.code == .notAudio)
        #expect(error?.message.hasPrefix(text) == true)
        #expect(#expect(throws: AudioError.self) { try AudioFile(path: dir.path) }?.code == .notAudio)
    }

    @Test(arguments: ["clip.wav", "clip.flac", "clip.ogg", "clip.mp3"])
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

    @Test func theSupportedFormatsIncludeTheFourThatMatter() {
        let formats = AudioFile.supportedFormats.joined(separator: "\n")
        for name in ["WAV", "FLAC", "OGG", "MPEG-1/2 Audio"] { #expect(formats.contains(name), "\(formats)") }
    }
}
