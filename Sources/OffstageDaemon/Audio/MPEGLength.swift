import CMPG123

/// The length of an MP3 that has no header stating it, counted with
/// libmpg123 (libsndfile's MP3 decoder).
///
/// libsndfile takes an MP3's length from its Xing, Info or VBRI header,
/// or without one guesses it from the file's size and the first frame's
/// bit rate, and reads no further than that. The guess counts an ID3v2
/// tag (cover art) as audio: a 10 s file with 300 kB of art was 28.8 s
/// long to it, and ended as "truncated" at 10 s. A variable bit rate
/// makes the guess wrong either way (a 5 s file guessed at 2.55 s).
enum MPEGLength {
    /// The frames an MP3 without a header stating its length holds, as
    /// libsndfile decodes them, by a scan of every frame header (no
    /// decoding, but a read of the whole file). `nil` when a header states
    /// the length (libsndfile's count, `libsndfileFrames`, then stands, and
    /// a file cut short of it is truncated), or when libmpg123 cannot read
    /// the file.
    static func countedFrames(path: String, libsndfileFrames: Int) -> Int? {
        opened(path) { handle -> Int? in
            // Told to ignore a stated length, libmpg123 guesses from the
            // size: libsndfile's count is that guess when none was stated.
            guard mpg123_length(handle) == libsndfileFrames, mpg123_scan(handle) == MPG123_OK.rawValue else { return nil }
            let length = mpg123_length(handle)
            return length >= 0 ? length : nil
        } ?? nil
    }

    /// Runs `body` on the file opened as libsndfile opens it (gapless: the
    /// encoder's delay and padding left out; stopping where the format
    /// changes), but ignoring any stated length, its first frame read.
    private static func opened<T>(_ path: String, _ body: (OpaquePointer) -> T) -> T? {
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else { return nil }
        defer { mpg123_delete(handle) }
        let flags = Int(
            MPG123_GAPLESS.rawValue | MPG123_QUIET.rawValue | MPG123_NO_FRANKENSTEIN.rawValue
                | MPG123_IGNORE_STREAMLENGTH.rawValue)
        guard mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0) == MPG123_OK.rawValue,
            mpg123_open(handle, path) == MPG123_OK.rawValue
        else { return nil }
        defer { mpg123_close(handle) }
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else { return nil }
        return body(handle)
    }
}
