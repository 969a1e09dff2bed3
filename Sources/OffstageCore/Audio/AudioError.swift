/// An audio request that failed: a file that cannot be played, a server
/// that cannot be reached, a player that does not exist or refuses.
/// The message is one line and names the file or player concerned.
public struct AudioError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// The file does not exist or cannot be read.
        case fileNotFound
        /// The file is not audio libsndfile knows.
        case notAudio
        /// The file is truncated or corrupt.
        case corrupt
        /// No sound server answers.
        case serverUnavailable
        /// The server refused or dropped a stream.
        case streamFailed
        /// No player with that id (it was stopped, or the server was reset).
        case noSuchPlayer
        /// The player refuses the request in its state (interrupted, stopped).
        case refused
        /// A value out of range (volume, seek position).
        case invalidArgument
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public static func noSuchPlayer(_ id: AudioPlayerID) -> AudioError {
        AudioError(.noSuchPlayer, "no \(id) (stopped, or gone with a server reset)")
    }

    public static func refused(_ id: AudioPlayerID, _ refusal: AudioPlayerMachine.Refusal) -> AudioError {
        AudioError(.refused, "\(id): \(refusal)")
    }
}
