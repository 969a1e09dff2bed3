import OffstageProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The baselines: a bare ping-pong of callback-sized lines between this
/// process and a child over a Unix socketpair, with no daemon in between.
///
/// `raw` moves bytes only (the child looks for the newline and answers a
/// fixed ack); `json` also encodes and parses the same messages Offstage
/// sends (`DaemonMessage.callback` out, `AppMessage.ack` back).
final class PingPongPeer {
    enum Codec: String {
        case raw, json
    }

    let pid: pid_t
    let codec: Codec
    private let socket: LineSocket
    private var nextID = 1

    /// A callback as the daemon writes it, about 110 bytes.
    static func callback(id: Int) -> DaemonMessage {
        .callback(CallbackMessage(
            id: id, name: "applicationWillResignActive:", state: .active, time: 12.345678, detail: .emptyObject))
    }

    /// Spawns `executable --child-pingpong FD codec` on one end of a socketpair.
    init(executable: String, codec: Codec) throws {
        var pair: [Int32] = [-1, -1]
        try syscall("socketpair") { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) }
        _ = fcntl(pair[0], F_SETFD, FD_CLOEXEC)
        let argv: [UnsafeMutablePointer<CChar>?] = [
            strdup(executable), strdup(PingPongChild.flag), strdup(String(pair[1])), strdup(codec.rawValue), nil,
        ]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, nil, nil, argv, environ)
        close(pair[1])
        guard result == 0 else {
            close(pair[0])
            throw SystemCallError(call: "posix_spawn", errno: result)
        }
        pid = child
        self.codec = codec
        socket = LineSocket(fd: pair[0])
    }

    /// One exchange: a callback-sized line out, an ack-sized line back.
    func exchange() throws {
        let id = nextID
        nextID += 1
        switch codec {
        case .raw:
            try socket.send(Self.rawPing)
            guard try socket.readLine() != nil else { throw BenchError("ping-pong child closed the socket") }
        case .json:
            try socket.send(Self.callback(id: id).json)
            guard let reply = try socket.receive(), case .ack(id) = try AppMessage(json: reply) else {
                throw BenchError("ping-pong child answered out of turn")
            }
        }
    }

    /// Stops the child (SIGSTOP) and waits until it is stopped.
    func freeze() throws {
        kill(pid, SIGSTOP)
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WUNTRACED)
            if result == pid, status & 0xff == 0x7f { return }
            if result == -1, errno == EINTR { continue }
            throw BenchError("ping-pong child did not stop (waitpid \(result), status \(status))")
        }
    }

    func thaw() { kill(pid, SIGCONT) }

    /// Closes the socket (the child exits at end of stream) and reaps the child.
    func finish() {
        kill(pid, SIGCONT)
        shutdown(socket.fd, Int32(SHUT_RDWR))
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
    }

    static let rawPing: [UInt8] = LineFraming.encode(callback(id: 123_456).json)
}

/// The child side of the ping-pong: `--child-pingpong FD raw|json`.
struct PingPongChild {
    static let flag = "--child-pingpong"
    let fd: Int32
    let codec: PingPongPeer.Codec

    init?(arguments: [String]) {
        guard arguments.count == 4, arguments[1] == Self.flag, let fd = Int32(arguments[2]),
            let codec = PingPongPeer.Codec(rawValue: arguments[3])
        else { return nil }
        self.fd = fd
        self.codec = codec
    }

    func run() -> Never {
        let socket = LineSocket(fd: fd)
        let rawAck = LineFraming.encode(AppMessage.ack(id: 123_456).json)
        do {
            switch codec {
            case .raw:
                while try socket.readLine() != nil { try socket.send(rawAck) }
            case .json:
                while let json = try socket.receive() {
                    guard case .callback(let callback) = try DaemonMessage(json: json) else {
                        throw BenchError("expected a callback")
                    }
                    try socket.send(AppMessage.ack(id: callback.id).json)
                }
            }
        } catch {
            printError("ping-pong child: \(error)\n")
            exit(1)
        }
        exit(0)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The baseline figures. Round-trip and wake baselines are taken one
/// sample at a time, interleaved with the Offstage samples they are compared
/// with, so both see the same load on a shared machine.
enum Baselines {
    /// A running child ready for ping-pong, warmed up.
    static func peer(executable: String, codec: PingPongPeer.Codec, warmUp: Int) throws -> PingPongPeer {
        let peer = try PingPongPeer(executable: executable, codec: codec)
        for _ in 0..<warmUp { try peer.exchange() }
        return peer
    }

    /// One round trip to the running child.
    static func pingPong(_ peer: PingPongPeer, into samples: inout Samples) throws {
        try samples.time { try peer.exchange() }
    }

    /// The child is stopped (and seen stopped); then SIGCONT and a round trip, timed.
    static func wake(_ peer: PingPongPeer, into samples: inout Samples) throws {
        try peer.freeze()
        try samples.time {
            peer.thaw()
            try peer.exchange()
        }
    }
}

extension Baselines {
    /// posix_spawn → exit of an executable that stops right after start-up
    /// (StateLab without a daemon exits at once; this binary with `--help`):
    /// the process start-up floor under a relaunch.
    static func processStart(executable: String, arguments: [String], iterations: Int) throws -> Samples {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var samples = Samples()
        for round in 0..<(iterations + 2) {
            let start = monotonicNanos()
            var child: pid_t = 0
            let result = posix_spawn(&child, executable, &actions, nil, argv, environ)
            guard result == 0 else { throw SystemCallError(call: "posix_spawn \(executable)", errno: result) }
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1, errno == EINTR {}
            if round >= 2 { samples.append(monotonicNanos() - start) }
        }
        return samples
    }
}
