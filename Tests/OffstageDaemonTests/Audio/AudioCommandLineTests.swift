import Foundation
import OffstageCore
import Testing
@testable import OffstageDaemon

/// `offstage audio`, run as the built binary.
@Suite(.timeLimit(.minutes(2))) struct AudioCommandLineTests {
    @Test func playingAFileToTheEndPrintsItsEvents() throws {
        let server = try PrivatePulseAudio(exitWhenIdle: .seconds(30))
        let run = try runOffstage(
            ["audio", "play", audioFixture("ringtone.wav"), "--app", "Test"], environment: ["PULSE_SERVER": server.serverAddress])
        #expect(run.status == 0, "\(run.stderr)")
        // `started` again after an underrun is possible on a busy machine.
        let lines = run.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.first?.hasSuffix("started") == true, "\(run.stdout)")
        // time, position, event: the clip (1 s) ends at its end.
        let last = lines.last?.split(separator: " ") ?? []
        #expect(last.count == 5 && last[2] == "1" && last[3] == "s" && last[4] == "ended", "\(run.stdout)")
        #expect(lines.dropLast().allSatisfy { $0.hasSuffix("started") }, "\(run.stdout)")
        #expect(run.stderr.hasPrefix("Playing \(audioFixture("ringtone.wav")) (WAV (Microsoft), 22050 Hz, 1 channel, 1 s) as music on the speaker."))
    }

    /// After a server restart the command plays again from where the
    /// sound was: the position read at `started`, plus the time it played
    /// until the server went (nothing polls it any more).
    @Test func aRestartedServerPlaysOnFromWhereTheSoundWas() throws {
        let server = try PrivatePulseAudio(exitWhenIdle: .seconds(30))
        let command = try RunningOffstage(
            ["audio", "play", audioFixture("clip.wav"), "--start", "2"], environment: ["PULSE_SERVER": server.serverAddress])
        #expect(command.awaitLine(containing: "started"))
        let started = ContinuousClock.now
        // Not a wait for an event: the sound plays a second, and how far it
        // got is what the test checks.
        Thread.sleep(forTimeInterval: 1)
        server.kill()
        let played = ContinuousClock.now - started
        let lost = try #require(command.line(containing: "reconnecting"))
        // time, "s", position, "s", why: where the command stopped its clock.
        let stoppedAt = try #require(Double(lost.split(separator: " ")[2]), "\(lost)")
        try server.restart()
        let reset = try #require(command.nextLine(), "no line after the reconnecting one")
        let from = try #require(reset.firstRange(of: "playing again from ").map { reset[$0.upperBound...].split(separator: " ")[0] }, "\(reset)")
        let position = try #require(Double(from), "\(reset)")
        // It plays again from where its clock stopped at the loss, whatever
        // the load: a clock that ran on through the reconnection (1 s) would
        // be ahead.
        #expect(abs(position - stoppedAt) < 0.01, "\(lost) then \(reset)")
        // `started` is read a little after it came, and the command notices
        // the death a little after it. A tracker that stands still gives 2;
        // the margin above is wide, the check before is the tight one.
        #expect(position >= 2 + played.seconds - 0.3 && position <= 2 + played.seconds + 1.5, "\(reset), played \(played)")
        #expect(command.awaitLine(containing: "started"), "it plays again")
        kill(command.process.processIdentifier, SIGTERM)
        _ = command.finish()
    }

    /// Looping, the position the command reckons when the server goes is
    /// within the file: it showed 1.5 s of a 1 s clip.
    @Test func aLoopingPlayerLostIsShownWithinTheFile() throws {
        let server = try PrivatePulseAudio(exitWhenIdle: .seconds(30))
        let command = try RunningOffstage(
            ["audio", "play", audioFixture("ringtone.wav"), "--loop", "--start", "0.5"],
            environment: ["PULSE_SERVER": server.serverAddress])
        #expect(command.awaitLine(containing: "started"))
        // Not a wait for an event: the clip (1 s) plays past its end and
        // round, to about 0.8 s (a position stuck at 0.5 would not do).
        Thread.sleep(forTimeInterval: 1.3)
        server.kill()
        let lost = try #require(command.line(containing: "reconnecting"))
        // time, "s", position, "s", why.
        let columns = lost.split(separator: " ")
        let (time, position) = (try #require(Double(columns[0]), "\(lost)"), try #require(Double(columns[2]), "\(lost)"))
        // Shown to the millisecond: just before the end reads as 1.
        #expect(position >= 0 && position <= 1, "\(lost)")
        // And it moved on with the clock, round the loop: from 0.5 s, as far
        // as the time says (less the start-up before `started`).
        let expected = (0.5 + time).truncatingRemainder(dividingBy: 1)
        let apart = abs(position - expected)
        #expect(min(apart, 1 - apart) < 0.2, "\(lost)")
        kill(command.process.processIdentifier, SIGTERM)
        _ = command.finish()
    }

    @Test func aMissingFileIsOneLineNamingIt() throws {
        let run = try runOffstage(["audio", "play", "/nonexistent/song.ogg"])
        #expect(run.status == 1)
        #expect(run.stderr == "offstage: error: /nonexistent/song.ogg: no such file\n")
    }

    @Test func noServerIsOneLineNamingIt() throws {
        let run = try runOffstage(["audio", "play", audioFixture("clip.wav"), "--server", "unix:/nonexistent/native"])
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("offstage: error: cannot reach unix:/nonexistent/native: "))
        #expect(run.stderr.split(separator: "\n").count == 1)
    }

    @Test func badOptionsAreOneLineErrors() throws {
        let role = try runOffstage(["audio", "play", audioFixture("clip.wav"), "--role", "alarm"])
        #expect(role.status == 64)
        #expect(role.stderr == "offstage: error: --role alarm: expected music or phone (see offstage audio play --help)\n")
        let volume = try runOffstage(["audio", "play", audioFixture("clip.wav"), "--volume", "3"])
        #expect(volume.status == 64)
        #expect(volume.stderr == "offstage: error: --volume must be within 0…1 (see offstage audio play --help)\n")
        // Past the end is an option error, found from the file before any server is asked (no PULSE_SERVER needed).
        let start = try runOffstage(["audio", "play", audioFixture("ringtone.wav"), "--start", "10"])
        #expect(start.status == 64)
        #expect(start.stderr == "offstage: error: --start 10 s is not before the end of \(audioFixture("ringtone.wav")) (1 s) (see offstage audio play --help)\n")
        // Too large for a duration is past the end too, not a sign error; shown as written.
        let far = try runOffstage(["audio", "play", audioFixture("ringtone.wav"), "--start", "1e300"])
        #expect(far.status == 64)
        #expect(far.stderr.hasPrefix("offstage: error: --start 1e300 s is not before the end of "), "\(far.stderr)")
        let negative = try runOffstage(["audio", "play", audioFixture("ringtone.wav"), "--start", "-1"])
        #expect(negative.status == 64)
        #expect(negative.stderr == "offstage: error: --start takes 0 or more seconds (see offstage audio play --help)\n")
        // Decimal only, as the gps commands' numbers: Double() reads 0x4 as 4 and 0x0.8p0 as 0.5.
        let hexStart = try runOffstage(["audio", "play", audioFixture("clip.wav"), "--start", "0x4"])
        #expect(hexStart.status == 64)
        #expect(hexStart.stderr == "offstage: error: --start takes decimal seconds, not 0x4 (see offstage audio play --help)\n")
        let hexVolume = try runOffstage(["audio", "play", audioFixture("clip.wav"), "--volume", "0x0.8p0"])
        #expect(hexVolume.status == 64)
        #expect(hexVolume.stderr == "offstage: error: --volume takes a decimal number, not 0x0.8p0 (see offstage audio play --help)\n")
        let emptyServer = try runOffstage(["audio", "play", audioFixture("clip.wav")], environment: ["PULSE_SERVER": ""])
        #expect(emptyServer.status == 64)
        #expect(
            emptyServer.stderr == "offstage: error: PULSE_SERVER is set but empty: give it an address such as unix:/path/native, "
                + "or unset it for the user's server (see offstage audio play --help)\n")
    }

    /// A failure while playing is a row of the table and the command's
    /// error, its message printed once (it was in both).
    @Test func aFailureWhilePlayingIsPrintedOnce() throws {
        let rig = try PulseRig()
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cut = try truncatedCopy(of: "clip.mp3", keeping: 0.5, in: dir)
        let run = try runOffstage(["audio", "play", cut], environment: ["PULSE_SERVER": rig.server.serverAddress])
        #expect(run.status == 1)
        let rows = run.stdout.split(separator: "\n")
        #expect(rows.last?.split(separator: " ").last == "failed", "\(run.stdout)")
        #expect(!run.stdout.contains("stops at"), "\(run.stdout)")
        let errors = run.stderr.split(separator: "\n").filter { $0.hasPrefix("offstage: error: ") }
        #expect(errors.count == 1 && errors[0].hasPrefix("offstage: error: \(cut): the audio stops at "), "\(run.stderr)")
    }

    /// A server with no output: the command says so, and does not blame
    /// the file (it said "on the speaker", then "the server dropped the
    /// stream (No such entity)" after the file's name).
    @Test func aServerWithNoSinkIsNamedNotTheFile() throws {
        let rig = try PulseRig(headphones: true)
        try rig.pactl("unload-module", "module-null-sink")
        let run = try runOffstage(["audio", "play", audioFixture("ringtone.wav")], environment: ["PULSE_SERVER": rig.server.serverAddress])
        #expect(run.status == 1)
        #expect(run.stdout == "")
        #expect(
            run.stderr == "offstage: error: \(rig.server.serverAddress) has no output to play on "
                + "(no sink; `pactl load-module module-null-sink` adds one)\n")
    }

    @Test func infoDescribesGoodFilesAndNamesBadOnes() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cut = try truncatedCopy(of: "clip.flac", keeping: 0.5, in: dir)
        let run = try runOffstage(["audio", "info", audioFixture("clip.mp3"), cut])
        #expect(run.status == 1)
        #expect(run.stdout == "\(audioFixture("clip.mp3")): MPEG-1/2 Audio, 22050 Hz, 1 channel, 5 s\n")
        #expect(run.stderr.hasPrefix("offstage: error: \(cut): truncated or corrupt"))
        let formats = try runOffstage(["audio", "info", "--formats"])
        #expect(formats.stdout.contains("FLAC (Free Lossless Audio Codec) (.flac)"))
        // An empty --server was "cannot reach : Invalid argument".
        let emptyServer = try runOffstage(["audio", "play", audioFixture("clip.wav"), "--server", ""])
        #expect(emptyServer.status == 64)
        #expect(emptyServer.stderr.hasPrefix("offstage: error: --server needs an address such as unix:/path/native; leave it out for the default"))
        // Files beside --formats were ignored (and a bad one passed).
        let both = try runOffstage(["audio", "info", "--formats", cut])
        #expect(both.status == 64)
        #expect(both.stderr.hasPrefix("offstage: error: --formats lists the formats and takes no files"))
    }

    /// libmpg123's own notes (libsndfile's MP3 decoder prints them on C's
    /// stderr) are left out: a cut MP3 printed a warning of fuzzy seeking,
    /// and text named .mp3 three resync notes above the command's error.
    @Test func theMP3DecodersNotesAreNotPrinted() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cut = try truncatedCopy(of: "clip.mp3", keeping: 0.2, in: dir)
        let text = dir.appendingPathComponent("text.mp3").path
        try "hello\n".write(toFile: text, atomically: true, encoding: .utf8)
        let run = try runOffstage(["audio", "info", cut, text])
        #expect(run.status == 1)
        #expect(run.stdout == "\(cut): MPEG-1/2 Audio, 22050 Hz, 1 channel, 5 s\n")
        #expect(run.stderr == "offstage: error: \(text): not an audio file libsndfile can read (no format it knows)\n")
    }

    /// An empty --directory ran the server in the current directory,
    /// leaving its log there.
    @Test func anEmptyDirectoryIsAUsageError() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try runOffstage(["audio", "server", "--directory", ""], in: dir.path, within: .seconds(15))
        #expect(run.status == 64)
        #expect(run.stderr == "offstage: error: --directory needs a directory; leave it out for a temporary one (see offstage audio server --help)\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
    }

    /// A file name that is not UTF-8 (a Latin-1 `é`) reached the command
    /// with U+FFFD for its byte: "no such file", exit 1. It is a usage
    /// error naming the argument, as for the gps commands.
    @Test func aFileNameThatIsNotUTF8IsAUsageError() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Made by the shell, as the names are: Process passes only Strings.
        let made = try runInShell(#"cp "$1" "$(printf 'clip\351.wav')""#, audioFixture("clip.wav"), in: dir)
        #expect(made.status == 0, "\(made.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        let notUTF8 = "is not valid UTF-8: offstage takes file names in UTF-8 (convmv -f latin1 -t utf8 renames a file)"
        let cases: [(script: String, usage: String)] = [
            (#"exec "$0" audio info "$(printf 'clip\351.wav')""#, "argument 3 (files) \(notUTF8) (see offstage audio info --help)"),
            (#"exec "$0" audio play "$(printf 'clip\351.wav')" --server unix:/nonexistent/native"#,
             "argument 3 (file) \(notUTF8) (see offstage audio play --help)"),
            // In a directory that does not exist, so that before the check it failed at once.
            (#"exec "$0" audio server --directory "$(printf 'gone\351')/pulse""#,
             "argument 4 (--directory) \(notUTF8) (see offstage audio server --help)"),
        ]
        for (script, usage) in cases {
            let run = try runInShell(script, in: dir)
            #expect(run.status == 64 && run.stderr == "offstage: error: \(usage)\n", "\(script): \(run.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == names.sorted())
    }

    /// `audio server` with its temporary directory in a scratch TMPDIR; the
    /// PulseAudio it runs, once it prints where it is.
    func startServerCommand(in given: URL? = nil) throws -> (command: RunningOffstage, pulseaudio: Int32, scratch: URL) {
        let scratch = try given ?? makeTemporaryDirectory()
        let command = try RunningOffstage(["audio", "server"], environment: ["TMPDIR": scratch.path])
        #expect(command.awaitLine(containing: "PULSE_SERVER=unix:" + scratch.path))
        return (command, try #require(command.child(named: "pulseaudio")), scratch)
    }

    /// SIGINT, SIGTERM or SIGHUP (a closed terminal) stops the server and
    /// removes its files before the command dies of the signal; SIGHUP
    /// used to leave PulseAudio running.
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP]) func aSignalStopsTheServerAndRemovesItsFiles(signal: Int32) throws {
        let (command, pulseaudio, scratch) = try startServerCommand()
        try command.expectDiesOf(signal, stopping: pulseaudio, emptying: scratch)
    }

    /// SIGKILL gives the command no chance to stop its server: the server's
    /// guard does, so no PulseAudio is left holding the directory. The
    /// directory stays; the next private server's start removes it.
    @Test func aServerDoesNotOutliveACommandKilledWithSIGKILL() throws {
        let (command, pulseaudio, scratch) = try startServerCommand()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try command.expectKilledOutrightStopping(pulseaudio, named: "PulseAudio")
        try command.expectLeftDirectorySwept(prefix: "offstage-pulse", in: scratch) {
            let (next, server, _) = try startServerCommand(in: scratch)
            return (next, server)
        }
    }

    /// A command killed outright in a named directory leaves the server's
    /// files there; the next server in it removes them (they stayed for
    /// good). The user's own `run` and `state` are never the server's
    /// (PulseAudio made them 0700; its own are in a directory of its own).
    @Test func theNextServerInANamedDirectoryRemovesWhatAKilledCommandLeft() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: false)
        chmod(run.path, 0o755)
        func startServer() throws -> (RunningOffstage, Int32) {
            let command = try RunningOffstage(["audio", "server", "--directory", directory.path])
            #expect(command.awaitLine(containing: "PULSE_SERVER=unix:" + directory.path))
            return (command, try #require(command.child(named: "pulseaudio")))
        }
        let (killed, first) = try startServer()
        try killed.expectKilledOutrightStopping(first, named: "PulseAudio")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(Set(["offstage.lock", "offstage.pa", "pulseaudio.log", "run"]).isSubset(of: left), "\(left)")
        #expect(left.filter { $0.hasPrefix("offstage-pulse-") }.count == 1, "\(left)")
        // A `state` of the user's made since: it stays.
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("state"), withIntermediateDirectories: false)
        try "mine".write(to: directory.appendingPathComponent("state/notes.txt"), atomically: true, encoding: .utf8)
        let (next, second) = try startServer()
        kill(next.process.processIdentifier, SIGTERM)
        _ = next.finish()
        #expect(kill(second, 0) == -1 && errno == ESRCH)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["pulseaudio.log", "run", "state"])
        #expect(try String(contentsOf: directory.appendingPathComponent("state/notes.txt"), encoding: .utf8) == "mine")
        var info = stat()
        #expect(stat(run.path, &info) == 0 && info.st_mode & 0o7777 == 0o755, "\(String(info.st_mode & 0o7777, radix: 8))")
    }

    /// A server that dies under the command is reported, not waited on forever.
    @Test func aServerThatDiesIsAnErrorInOneLine() throws {
        let (command, pulseaudio, scratch) = try startServerCommand()
        kill(pulseaudio, SIGKILL)
        let (status, stderr) = command.finish()
        #expect(command.process.terminationReason == .exit)
        #expect(status == 1)
        let lines = stderr.split(separator: "\n")
        #expect(lines.last == "offstage: error: PulseAudio exited on its own (killed by signal 9)", "\(stderr)")
        #expect(lines.count == 2, "the running line, then the error: \(stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == [])
    }
}
