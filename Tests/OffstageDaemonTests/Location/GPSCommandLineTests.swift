import Foundation
import Synchronization
import Testing
import OffstageCore
@testable import OffstageDaemon

/// The `offstage gps` commands, run as the built binary.
@Suite(.timeLimit(.minutes(2))) struct GPSCommandLineTests {
    typealias Run = CommandRun

    func offstage(_ arguments: String...) throws -> Run { try runOffstage(arguments) }

    @Test func missingFixtureIsOneLineAndExitsNonZero() throws {
        let dir = try makeTemporaryDirectory()
        let output = dir.appendingPathComponent("out.nmea").path
        let run = try offstage("gps", "convert", "/nonexistent/drive.gpx", output)
        #expect(run.status == 1)
        #expect(run.stderr == "offstage: error: /nonexistent/drive.gpx: cannot open: No such file or directory\n")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// A fixture that cannot be opened is named with the system's reason,
    /// by convert as by feed: convert (and a GPX feed) said "no such
    /// readable file" whatever it was (a permission denied). Tests run as
    /// root, whom permissions do not stop: a path through a regular file
    /// fails with ENOTDIR.
    @Test func aFixtureThatCannotBeOpenedIsNamedWithTheReason() throws {
        let dir = try makeTemporaryDirectory()
        let file = try write("x", to: "file", in: dir)
        for input in [file + "/x.nmea", file + "/x.gpx", file + "/x.json"] {
            let commands = [["convert", input, dir.appendingPathComponent("out.json").path], ["feed", input]]
            for command in commands {
                let run = try runOffstage(["gps"] + command)
                #expect(run.status == 1 && run.stderr == "offstage: error: \(input): cannot open: Not a directory\n", "\(command): \(run.stderr)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["file"])
    }

    /// A file name that is not UTF-8 (a Latin-1 `é`, as old loggers and FAT
    /// media write them) reached the command with U+FFFD for its byte: the
    /// input "did not exist", and the output was written under another name
    /// while the command said it had converted it. Such a name is refused.
    @Test func aFileNameThatIsNotUTF8IsAUsageError() throws {
        let dir = try makeTemporaryDirectory()
        let fixes = rmcAndGGA(LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_550_400))
        _ = try write(fixes, to: "good.nmea", in: dir)
        // Made by the shell, as the names are: Process passes only Strings.
        let made = try runInShell(#"printf '%s' "$1" > "$(printf 'track\351.nmea')""#, fixes, in: dir)
        #expect(made.status == 0, "\(made.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        let cases: [(script: String, usage: String)] = [
            (#"exec "$0" gps convert "$(printf 'track\351.nmea')" out.json"#, "argument 3 (input) is not valid UTF-8: offstage takes file names in UTF-8 (convmv -f latin1 -t utf8 renames a file) (see offstage gps convert --help)"),
            (#"exec "$0" gps convert good.nmea "$(printf 'out\351.json')""#, "argument 4 (output) is not valid UTF-8: offstage takes file names in UTF-8 (convmv -f latin1 -t utf8 renames a file) (see offstage gps convert --help)"),
            (#"exec "$0" gps feed --quiet "$(printf 'track\351.nmea')""#, "argument 4 (file) is not valid UTF-8: offstage takes file names in UTF-8 (convmv -f latin1 -t utf8 renames a file) (see offstage gps feed --help)"),
            (#"exec "$0" gps fix 1 2 --gpsd 1 --control="$(printf 'g\351.sock')""#, "argument 7 (--control) is not valid UTF-8: offstage takes file names in UTF-8 (convmv -f latin1 -t utf8 renames a file) (see offstage gps fix --help)"),
        ]
        for (script, usage) in cases {
            let run = try runInShell(script, in: dir)
            #expect(run.status == 64 && run.stderr == "offstage: error: \(usage)\n", "\(script): \(run.stderr)")
        }
        // Nothing was written, under any name.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == names.sorted())
    }

    @Test func pipesAndDirectoriesAreRefusedBeforeAnyLineIsLost() throws {
        let dir = try makeTemporaryDirectory()
        // A feed reads its fixture twice (count, then feed): from a pipe it fed nothing and exited 0.
        let pipe = dir.appendingPathComponent("fixes.nmea").path
        #expect(mkfifo(pipe, 0o600) == 0)
        let feed = try offstage("gps", "feed", pipe)
        #expect(feed.status == 1)
        #expect(feed.stderr == "offstage: error: \(pipe): not a regular file (a pipe, a socket or a device): gps feed reads its fixture twice; save it to a file first\n")
        // Guessing a pipe's format read its first lines, which were then lost.
        let unnamed = dir.appendingPathComponent("fixes").path
        #expect(mkfifo(unnamed, 0o600) == 0)
        // A socket is refused as a pipe is.
        let socketPath = dir.appendingPathComponent("fixes.sock").path
        let listener = try listeningSocket(at: socketPath)
        defer { close(listener) }
        let fromSocket = try offstage("gps", "feed", socketPath)
        #expect(fromSocket.status == 1)
        #expect(fromSocket.stderr == "offstage: error: \(socketPath): not a regular file (a pipe, a socket or a device): gps feed reads its fixture twice; save it to a file first\n")
        // A feed from a pipe without an extension asked for --format first, then refused the pipe.
        let unnamedFeed = try offstage("gps", "feed", unnamed)
        #expect(unnamedFeed.status == 1)
        #expect(unnamedFeed.stderr == "offstage: error: \(unnamed): not a regular file (a pipe, a socket or a device): gps feed reads its fixture twice; save it to a file first\n")
        let convert = try offstage("gps", "convert", unnamed, dir.appendingPathComponent("out.json").path)
        #expect(convert.status == 1)
        #expect(convert.stderr == "offstage: error: \(unnamed): not a regular file (a pipe or a device): its format must be given (--format gpx, nmea or json)\n")
        let directory = dir.appendingPathComponent("d.gpx").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let fromDirectory = try offstage("gps", "convert", directory, dir.appendingPathComponent("out.json").path)
        #expect(fromDirectory.status == 1)
        #expect(fromDirectory.stderr == "offstage: error: \(directory): is a directory\n")
    }

    @Test func strictConvertNamesFileAndLine() throws {
        let dir = try makeTemporaryDirectory()
        let input = try write(nmea("GPGGA,120000.000,4851.0,N,00221.0,E,1,08,1.0,35.0,M,0.0,M,,") + "\n$GPRMC,120000*00\n", to: "in.nmea", in: dir)
        let output = dir.appendingPathComponent("out.gpx").path
        let run = try offstage("gps", "convert", "--strict", input, output)
        #expect(run.status == 1)
        #expect(!FileManager.default.fileExists(atPath: output), "no half-written output")
        #expect(run.stderr == "offstage: error: \(input):2: bad checksum 00, expected 64\n")
    }

    @Test func strictNMEAStopsAtTheFirstBadLineAndWarningsComeInFileOrder() throws {
        let dir = try makeTemporaryDirectory()
        let lines = [
            nmea("GPGGA,120001.000,4851.0010,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),
            nmea("GPRMC,120001.000,A,4851.0010,N,00221.0000,E,1.0,42.25,010524,,,A"),
            nmea("GPGGA,120000.000,4851.0000,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),  // back in time
            "hello",
            nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,1.0,42.25,010524,,,A"),
            nmea("GPGGA,120002.000,4851.0020,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),
            nmea("GPRMC,120002.000,A,4851.0020,N,00221.0000,E,1.0,42.25,010524,,,A"),
        ]
        let input = try write(lines.joined(separator: "\n") + "\n", to: "in.nmea", in: dir)
        let output = dir.appendingPathComponent("out.json").path
        let backwards = "\(input):3: time goes backwards (2024-05-01T12:00:00.000Z after 2024-05-01T12:00:01.000Z)"
        for command in [["convert", "--strict", input, output], ["feed", "--strict", input]] {
            let run = try runOffstage(["gps"] + command)
            #expect(run.status == 1 && run.stderr == "offstage: error: \(backwards)\n", "\(command)")
        }
        let run = try offstage("gps", "convert", input, output)
        #expect(run.status == 0)
        #expect(run.stderr == """
            offstage: warning: \(backwards)
            offstage: warning: \(input):4: not an NMEA sentence
            Converted 2 fixes from \(input) to \(output) (2 bad lines skipped).

            """)
    }

    /// Past the ten bad lines shown, the rest are counted: "1 more bad lines".
    @Test(arguments: [(11, "1 more bad line skipped"), (12, "2 more bad lines skipped")])
    func badLinesPastTheTenShownAreCounted(bad: Int, said: String) throws {
        let dir = try makeTemporaryDirectory()
        let fix = nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,1.0,42.25,010524,,,A")
        let input = try write(([fix] + Array(repeating: "hello", count: bad)).joined(separator: "\n") + "\n", to: "in.nmea", in: dir)
        let run = try offstage("gps", "convert", input, dir.appendingPathComponent("out.json").path)
        #expect(run.status == 0)
        #expect(run.stderr.contains("offstage: warning: ... \(said)\n"), "\(run.stderr)")
    }

    @Test func impossibleDatesOnTheCommandLineAreOneLineErrors() throws {
        let dir = try makeTemporaryDirectory()
        let input = try write(nmea("GPGGA,120000.000,4851.0,N,00221.0,E,1,08,1.0,35.0,M,0.0,M,,") + "\n", to: "in.nmea", in: dir)
        let output = dir.appendingPathComponent("out.json").path
        let start = try offstage("gps", "convert", "--start", "2024-02-30T00:00:00Z", input, output)
        #expect(start.status == 64 && start.stderr == "offstage: error: --start 2024-02-30T00:00:00Z: 2024-02-30 does not exist (February 2024 has 29 days) (see offstage gps convert --help)\n")
        let date = try offstage("gps", "feed", "--nmea-date", "2023-02-29", input)
        #expect(date.status == 64 && date.stderr == "offstage: error: --nmea-date 2023-02-29: 2023-02-29 does not exist (February 2023 has 28 days) (see offstage gps feed --help)\n")
        // Refused before any gpsd is started.
        let time = try offstage("gps", "fix", "48.85", "2.35", "--time", "2024-04-31T12:00:00Z")
        #expect(time.status == 64 && time.stderr == "offstage: error: --time 2024-04-31T12:00:00Z: 2024-04-31 does not exist (April 2024 has 30 days) (see offstage gps fix --help)\n")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func gpxWithoutAccuracyGainsNoneThroughNMEA() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1"><trk><trkseg>
            <trkpt lat="48.85" lon="2.35"><ele>35</ele><time>2024-05-06T07:30:00Z</time></trkpt>
            </trkseg></trk></gpx>
            """
        let input = try write(gpx, to: "in.gpx", in: dir)
        let nmeaPath = dir.appendingPathComponent("mid.nmea").path
        let json = dir.appendingPathComponent("out.json").path
        #expect(try offstage("gps", "convert", input, nmeaPath).status == 0)
        #expect(try offstage("gps", "convert", nmeaPath, json).status == 0)
        #expect(try String(contentsOfFile: json, encoding: .utf8)
            == "{\"class\":\"TPV\",\"device\":\"offstage\",\"mode\":3,\"time\":\"2024-05-06T07:30:00.000Z\",\"lat\":48.850000000,\"lon\":2.350000000,\"altMSL\":35.000}\n")
    }

    /// NMEA's dates have two-digit years, which our reader takes as
    /// 1980–2079: a fix of 1969 came back as 2069, without a word. GPX and
    /// gpsd JSON hold it; NMEA refuses it, and no file is left.
    @Test func aYearNMEACannotHoldIsRefusedNotShifted() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = gpxTrack(
            #"<trkpt lat="48.85" lon="2.35"><time>2079-12-31T23:59:59Z</time></trkpt>"#,
            #"<trkpt lat="48.86" lon="2.35"><time>2080-01-01T00:00:00Z</time></trkpt>"#)
        let input = try write(gpx, to: "in.gpx", in: dir)
        let output = dir.appendingPathComponent("out.nmea").path
        let run = try offstage("gps", "convert", input, output)
        #expect(run.status == 1)
        #expect(run.stderr == "offstage: error: \(output): cannot write the fix at 2080-01-01T00:00:00.000Z: NMEA's two-digit year holds 1980 to 2079, not 2080 (GPX and gpsd JSON hold any year)\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["in.gpx"])
        #expect(try offstage("gps", "convert", input, dir.appendingPathComponent("out.json").path).status == 0)
    }

    /// gpsd reads what we feed it as NMEA: a fix of 1969 became one of 2069.
    @Test func aFixNMEACannotDateIsNotFedToGPSD() throws {
        let run = try offstage("gps", "fix", "48.85", "2.35", "--time", "1969-07-20T20:17:40Z")
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("offstage: error: --time 1969-07-20T20:17:40Z: NMEA's two-digit year holds 1980 to 2079, not 1969 (gpsd reads the feed as NMEA)"), "\(run.stderr)")
    }

    /// gpsd moves a time before 2017 on by 1024 weeks (2016-12-31 reached
    /// watchers as 2036-08-16) while the tools said they sent it as it was:
    /// such fixes are refused before gpsd starts.
    @Test func aFixGPSDWouldMoveOnIsRefused() throws {
        let fix = try offstage("gps", "fix", "1", "2", "--time", "2016-12-31T23:59:59Z")
        #expect(fix.status == 64)
        #expect(fix.stderr.hasPrefix("offstage: error: --time 2016-12-31T23:59:59Z: gpsd takes a time before 2017-01-01 for a GPS week rollover and moves it on by 1024 weeks"), "\(fix.stderr)")
    }

    /// A fixture's fix gpsd would misdate (NMEA's two-digit year, gpsd's
    /// week rollover) is found in the counting pass, before gpsd starts: it
    /// was found only when its turn came to be fed, or not at all.
    @Test(arguments: [
        (4_081_735_801.0, "the fix at 2099-05-06T07:30:01.000Z cannot be fed: NMEA's two-digit year holds 1980 to 2079, not 2099 (gpsd reads the feed as NMEA)"),
        (946_728_000, "the fix at 2000-01-01T12:00:00.000Z cannot be fed: gpsd takes a time before 2017-01-01 for a GPS week rollover and moves it on by 1024 weeks"),
    ])
    func aFeedWithAFixGPSDWouldMisdateFailsBeforeGPSDStarts(time: Double, message: String) throws {
        let dir = try makeTemporaryDirectory()
        // After a good fix where the time allows: found before its turn.
        let good = LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_980_600)
        let fixes = (time > good.time ? [good] : []) + [LocationFix(latitude: 48.86, longitude: 2.35, time: time)]
        let input = try write(gpxDocument(fixes, name: "far"), to: "far.gpx", in: dir)
        let run = try runOffstage(["gps", "feed", input], environment: ["TMPDIR": dir.path])
        #expect(run.status == 1)
        #expect(run.stderr == "offstage: error: \(input): \(message)\n")
        // No private gpsd was made (its directory would be in TMPDIR).
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["far.gpx"])
    }

    /// The bad lines are told before the feed, which at 1× may take hours:
    /// they came after it. A feed that finds no fix says why, as convert does.
    @Test func aFeedTellsItsBadLinesBeforeFeedingAndWhyItHasNoFixes() throws {
        let dir = try makeTemporaryDirectory()
        let good = NMEAFixWriter.sentences(for: LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_550_400))
        let input = try write(good + "$GPRMC,garbage*00\r\n", to: "bad-end.nmea", in: dir)
        let run = try runOffstage(["gps", "feed", input, "--speed", "max", "--quiet"], environment: ["TMPDIR": dir.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        let warning = lines.firstIndex { $0.hasPrefix("offstage: warning: \(input):3: ") }
        let started = lines.firstIndex { $0.hasPrefix("Started a private gpsd") }
        #expect(warning != nil && started != nil && warning! < started!, "\(run.stderr)")
        #expect(run.stderr.contains("Fed 1 fix at max in "), "\(run.stderr)")
        let ggaOnly = try write(nmea("GPGGA,120000.000,4851.0,N,00221.0,E,1,08,1.0,35.0,M,0.0,M,,") + "\n", to: "gga.nmea", in: dir)
        let none = try offstage("gps", "feed", ggaOnly)
        #expect(none.status == 1)
        #expect(none.stderr.hasSuffix(
            "offstage: error: \(ggaOnly) has no fixes (1 bad line, the first: \(ggaOnly):1: time of day without a date (no RMC sentence before it; --nmea-date YYYY-MM-DD gives one))\n"),
            "\(none.stderr)")
        // Standard input cannot be read twice: it was "cannot open".
        let dash = try offstage("gps", "feed", "-")
        #expect(dash.status == 1 && dash.stderr == "offstage: error: -: not a regular file (a pipe, a socket or a device): gps feed reads its fixture twice; save it to a file first\n")
    }

    /// A gpsd that goes away mid-feed (a restarted one has forgotten the
    /// device) ends the feed in one line: it went on to the end of the
    /// fixture without a word, and at `max`, where the terminal is full,
    /// it waited for good on a write nobody would read. gpsd is frozen first
    /// (SIGSTOP), so the feed cannot finish before it is killed: it fills
    /// the terminal, at max, and waits.
    @Test(.timeLimit(.minutes(2)), arguments: [("10", 600), ("max", 300_000)])
    func aFeedWhoseGPSDGoesAwayStops(speed: String, count: Int) async throws {
        let dir = try makeTemporaryDirectory()
        let start = 1_714_550_400.0
        let track = (0..<count).map { LocationFix(latitude: 48.85 + Double($0 % 1000) * 1e-5, longitude: 2.35, time: start + Double($0)) }
        let input = try write(track.map(NMEAFixWriter.sentences).joined(), to: "long.nmea", in: dir)
        let gpsd = try PrivateGPSD(devices: [])
        defer { gpsd.stopAndRemove() }
        // Frozen on its first fix, on the reader's thread: a recording task
        // waited for the test process's busy task pool, and the feed of
        // 300,000 fixes had ended (13 s) before the freeze (once, in CI).
        let frozen = Mutex(false)
        let watcher = SourceRecorder(
            GPSDLocationSource(endpoint: gpsd.endpoint).events { event in
                if case .fix = event { frozen.withLock { $0 = $0 || gpsd.freeze() } }
            })
        defer { watcher.cancel() }
        let feed = try RunningOffstage([
            "gps", "feed", input, "--speed", speed, "--quiet", "--gpsd", "\(gpsd.endpoint)", "--control", gpsd.controlSocket,
        ])
        // Under way: gpsd has reported a fix of the feed.
        // Counting 300,000 fixes in a debug build, then gpsd's probe, take time.
        try #require(await watcher.until(timeout: .seconds(60)) { !$0.fixes.isEmpty })
        #expect(frozen.withLock { $0 }, "no gpsd to freeze")
        #expect(feed.process.isRunning, "the feed ended before gpsd was stopped")
        gpsd.kill()
        let (status, stderr) = feed.finish()
        #expect(status == 1)
        #expect(stderr.contains("offstage: error: gpsd at \(gpsd.endpoint) went away after reporting "), "\(stderr)")
        #expect(stderr.hasSuffix("of \(count) fixes; the rest would be lost\n"), "\(stderr)")
    }

    /// A named gpsd reuses a device slot, and gpsd 3.22 keeps the slot's
    /// "I know where epochs end" while forgetting which sentence ends them:
    /// after one feed, every later feed lost its first fix and a `gps fix`
    /// never arrived. Two feeds at once: gpsd answers one control request
    /// at a time, about 3 s each, and the second gave up after 5 s.
    @Test(.timeLimit(.minutes(2))) func aNamedGPSDTakesFeedAfterFeedAndTwoAtOnce() async throws {
        let dir = try makeTemporaryDirectory()
        let start = 1_714_550_400.0
        let track = (0..<10).map { LocationFix(latitude: 48.85 + Double($0) * 1e-4, longitude: 2.35, time: start + Double($0)) }
        let input = try write(track.map(NMEAFixWriter.sentences).joined(), to: "ten.nmea", in: dir)
        let gpsd = try PrivateGPSD(devices: [])
        defer { gpsd.stopAndRemove() }
        // A client keeps a gpsd with no device of its own from exiting between commands.
        let watcher = SourceRecorder(GPSDLocationSource(endpoint: gpsd.endpoint))
        defer { watcher.cancel() }
        try #require(await watcher.until { $0.connectedCount == 1 })
        let target = ["--gpsd", "\(gpsd.endpoint)", "--control", gpsd.controlSocket]
        for round in 1...2 {
            let feed = try runOffstage(["gps", "feed", input, "--speed", "max", "--quiet"] + target)
            #expect(feed.status == 0 && feed.stderr.hasSuffix("gpsd reported 10 of them.\n"), "feed \(round): \(feed.stderr)")
        }
        let fix = try runOffstage(["gps", "fix", "1", "2"] + target)
        #expect(fix.status == 0, "\(fix.stderr)")
        #expect(await watcher.until { $0.fixes.contains { $0.latitude == 1 } })
        let first = try RunningOffstage(["gps", "feed", input, "--speed", "max", "--quiet"] + target)
        let second = try RunningOffstage(["gps", "feed", input, "--speed", "max", "--quiet"] + target)
        for (name, feed) in [("first", first), ("second", second)] {
            let (status, stderr) = feed.finish()
            #expect(status == 0 && stderr.hasSuffix("gpsd reported 10 of them.\n"), "\(name): \(stderr)")
        }
    }

    /// A GPX file that turns out not well-formed: the points skipped before
    /// the break are warned of, then the error; they went unsaid.
    @Test func theBadPointsBeforeABreakInAGPXFileAreWarnedOf() throws {
        let dir = try makeTemporaryDirectory()
        let input = try write("""
            <gpx version="1.1"><trk><trkseg>
            <trkpt lat="48,1" lon="2"><time>2024-05-01T08:00:00Z</time></trkpt>
            <trkpt lat="48.1" lon="2"><time>2024-05-01T08:00:01Z</time></trkpt>
            <bad
            """, to: "broken.gpx", in: dir)
        let run = try offstage("gps", "convert", input, dir.appendingPathComponent("out.json").path)
        #expect(run.status == 1)
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(run.stderr)")
        #expect(lines.first == "offstage: warning: \(input):2: <trkpt> with a bad attribute lat=\"48,1\"", "\(run.stderr)")
        #expect(lines.last?.hasPrefix("offstage: error: \(input):4: not well-formed XML") == true, "\(run.stderr)")
    }

    /// What a read leaves out on purpose is counted in the summary, with
    /// what it was: a waypoint beside a track was dropped without a word,
    /// and a gpsd log with numeric times (an older gpsd's) had "no fixes"
    /// and no reason.
    @Test func theInputsIgnoredOnPurposeAreCountedInTheSummary() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = try write("""
            <gpx version="1.1"><wpt lat="48.85" lon="2.35"><name>home</name></wpt>
            <trk><trkseg><trkpt lat="48.86" lon="2.35"><time>2024-05-06T07:30:00Z</time></trkpt></trkseg></trk></gpx>
            """, to: "wpt.gpx", in: dir)
        let output = dir.appendingPathComponent("out.json").path
        let converted = try offstage("gps", "convert", gpx, output)
        #expect(converted.status == 0)
        #expect(converted.stderr == "Converted 1 fix from \(gpx) to \(output) (1 point ignored: untimed waypoints and route points beside a track).\n")
        let json = try write(#"{"class":"TPV","mode":2,"time":1714980600.0,"lat":48.85,"lon":2.35}"# + "\n", to: "old.json", in: dir)
        let why = "1 line ignored: not a TPV with a fix and an ISO 8601 time, a repeated report of an epoch, or another device's fix"
        let none = try offstage("gps", "convert", json, dir.appendingPathComponent("none.gpx").path)
        #expect(none.status == 1 && none.stderr == "offstage: error: \(json): no fixes (\(why)); \(dir.path)/none.gpx not written\n", "\(none.stderr)")
        let noFeed = try offstage("gps", "feed", json)
        #expect(noFeed.status == 1 && noFeed.stderr == "offstage: error: \(json) has no fixes (\(why))\n", "\(noFeed.stderr)")
        let feed = try runOffstage(["gps", "feed", gpx, "--speed", "max", "--quiet"], environment: ["TMPDIR": dir.path])
        #expect(feed.status == 0 && feed.stderr.contains("/s; 1 point ignored: untimed waypoints and route points beside a track); gpsd reported 1 of them.\n"), "\(feed.stderr)")
    }

    /// `-` is the standard streams, as in most tools: `- out.gpx` made a
    /// file named `-`. The format must then be given.
    @Test func aDashConvertsFromStandardInputToStandardOutput() throws {
        let dir = try makeTemporaryDirectory()
        let nmeaText = NMEAFixWriter.sentences(for: LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_550_400))
        let input = try write(nmeaText, to: "in.nmea", in: dir)
        let run = try offstage("gps", "convert", input, "-", "--to", "json")
        #expect(run.status == 0)
        #expect(run.stdout == "{\"class\":\"TPV\",\"device\":\"offstage\",\"mode\":2,\"time\":\"2024-05-01T08:00:00.000Z\",\"lat\":48.850000000,\"lon\":2.350000000}\n")
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/-"))
        // Appended to, standard output is not truncated (it was reopened with O_TRUNC).
        let log = dir.appendingPathComponent("log.json").path
        try "kept\n".write(toFile: log, atomically: true, encoding: .utf8)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec \"$0\" gps convert \"$1\" - --to json >> \"$2\"", Paths.products + "/offstage", input, log]
        let errors = Pipe()
        shell.standardError = errors
        try shell.run()
        _ = drain([errors.fileHandleForReading], of: shell, within: commandLimit)
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "kept\n" + run.stdout)
        let noFormat = try offstage("gps", "convert", input, "-")
        #expect(noFormat.status == 64 && noFormat.stderr.hasPrefix("offstage: error: - (standard output) needs --to gpx, nmea or json"), "\(noFormat.stderr)")
        let fromStandardInput = try offstage("gps", "convert", "-", dir.appendingPathComponent("out.gpx").path)
        #expect(fromStandardInput.status == 64 && fromStandardInput.stderr.hasPrefix("offstage: error: - (standard input) needs --format gpx, nmea or json"))
    }

    @Test func convertWritesNMEAAndWarnsAboutSkippedLines() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1"><trk><trkseg>
            <trkpt lat="48.85" lon="2.35"><ele>35</ele><time>2024-05-06T07:30:00Z</time></trkpt>
            <trkpt lat="48.86"><time>2024-05-06T07:30:01Z</time></trkpt>
            <trkpt lat="-33.5" lon="-70.25"><time>2024-05-06T07:30:02.5Z</time></trkpt>
            </trkseg></trk></gpx>
            """
        let input = try write(gpx, to: "in.gpx", in: dir)
        let output = dir.appendingPathComponent("out.nmea").path
        let run = try offstage("gps", "convert", input, output)
        #expect(run.status == 0)
        #expect(run.stderr == """
            offstage: warning: \(input):3: <trkpt> without lat/lon
            Converted 2 fixes from \(input) to \(output) (1 bad line skipped).

            """)
        let expected = [
            nmea("GPRMC,073000.000,A,4851.000000,N,00221.000000,E,,,060524,,,A"),
            nmea("GPGGA,073000.000,4851.000000,N,00221.000000,E,1,08,,35.00,M,0.0,M,,"),
            nmea("GPRMC,073002.500,A,3330.000000,S,07015.000000,W,,,060524,,,A"),
            nmea("GPGGA,073002.500,3330.000000,S,07015.000000,W,1,08,,,,0.0,M,,"),
        ].map { $0 + "\r\n" }.joined()
        #expect(try String(contentsOfFile: output, encoding: .utf8) == expected)
    }

    /// A directory with a FIFO as the conversion's input (`in.nmea`), so a
    /// test decides when the input goes on and ends, and the output's path.
    func pipedConversion() throws -> (dir: URL, input: String, output: String) {
        let dir = try makeTemporaryDirectory()
        let input = dir.appendingPathComponent("in.nmea").path
        #expect(mkfifo(input, 0o600) == 0)
        return (dir, input, dir.appendingPathComponent("out.gpx").path)
    }

    @Test func anInterruptedConversionLeavesNoPartialFile() throws {
        let (dir, input, output) = try pipedConversion()
        let running = try RunningOffstage(["gps", "convert", input, output])
        // The converter opens its input once its partial output exists, so
        // when this open returns, the partial file is there.
        let writer = try #require(FileHandle(forWritingAtPath: input))
        writer.write(Data((nmea("GPGGA,120000.000,4851.0,N,00221.0,E,1,08,1.0,35.0,M,0.0,M,,") + "\n").utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).contains { $0.hasSuffix(".partial") })
        kill(running.process.processIdentifier, SIGINT)
        let (status, _) = running.finish()
        try writer.close()
        #expect(running.process.terminationReason == .uncaughtSignal)
        #expect(status == SIGINT)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["in.nmea"])
    }

    @Test func aConversionStartedWithInterruptsIgnoredKeepsIgnoringThem() throws {
        let (_, input, output) = try pipedConversion()
        // As `nohup` or a shell's background job starts it: SIGINT ignored.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "trap '' INT; exec \"$0\" gps convert \"$1\" \"$2\"", Paths.products + "/offstage", input, output]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let writer = try #require(FileHandle(forWritingAtPath: input))
        let fixture = try String(contentsOf: repositoryRoot.appendingPathComponent("samples/fixtures/commute.nmea"), encoding: .utf8)
        writer.write(Data(fixture.split(separator: "\n").prefix(6).map { $0 + "\n" }.joined().utf8))
        kill(process.processIdentifier, SIGINT)
        try writer.close()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8).contains("<trkpt"))
    }

    @Test func watchingAGPSDThatNeverAnsweredIsAnError() throws {
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let run = try offstage("gps", "watch", "--gpsd", "127.0.0.1:1", "--count", "1")
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("offstage: error: cannot connect to gpsd at 127.0.0.1:1: "), "\(run.stderr)")
        #expect(run.stderr.hasSuffix(" (--wait waits for it)\n"), "\(run.stderr)")
    }

    /// `--gpsd` naming a port where nothing listens, with the control socket
    /// of another gpsd: the device was added to that one, and 18 s later the
    /// error blamed the device. It fails at once, as `gps watch` does.
    @Test func aNamedGPSDWhereNothingListensFailsAtOnce() throws {
        let other = try PrivateGPSD(devices: [])
        defer { other.stopAndRemove() }
        let port = try LocationSocket.freeLoopbackPort()
        let started = ContinuousClock.now
        let run = try offstage("gps", "fix", "1", "2", "--gpsd", "\(port)", "--control", other.controlSocket)
        #expect(run.status == 1)
        #expect(run.stderr == "offstage: error: cannot connect to gpsd at localhost:\(port): Connection refused\n", "\(run.stderr)")
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// A port that answers but never lists the device: the device went to
    /// the gpsd behind `--control`, another one, which the error now says
    /// may be the cause (it said only that the device was not opened).
    @Test func aGPSDThatNeverListsTheDeviceNamesTheControlSocket() throws {
        let taking = try PrivateGPSD(devices: [])
        defer { taking.stopAndRemove() }
        let named = try PrivateGPSD(devices: [])
        defer { named.stopAndRemove() }
        let run = try offstage("gps", "fix", "1", "2", "--gpsd", "\(named.endpoint.port)", "--control", taking.controlSocket)
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("offstage: error: gpsd at localhost:\(named.endpoint.port) did not open /dev/pts/"), "\(run.stderr)")
        #expect(run.stderr.hasSuffix(" within 15 s: --control \(taking.controlSocket) may be the control socket of another gpsd (it must be the -F of the gpsd at localhost:\(named.endpoint.port))\n"), "\(run.stderr)")
    }

    @Test func badOptionsAreOneLineErrors() throws {
        let fixture = repositoryRoot.appendingPathComponent("samples/fixtures/jitter-boundary.gpx").path
        let speed = try offstage("gps", "feed", fixture, "--speed", "fast")
        #expect(speed.status == 64 && speed.stderr == "offstage: error: --speed fast: expected a number from 0.001 to 1000000, or max (see offstage gps feed --help)\n")
        // Speeds whose waits are no duration crashed the feed (and left its gpsd running).
        for huge in ["1e308", "1e-300"] {
            let run = try offstage("gps", "feed", fixture, "--speed", huge)
            #expect(run.status == 64 && run.stderr == "offstage: error: --speed \(huge): expected a number from 0.001 to 1000000, or max (see offstage gps feed --help)\n")
        }
        let coordinate = try offstage("gps", "fix", "91", "0")
        #expect(coordinate.status == 64 && coordinate.stderr == "offstage: error: 91, 0 is not a valid coordinate (latitude -90 to 90, longitude -180 to 180) (see offstage gps fix --help)\n")
        let endpoint = try offstage("gps", "watch", "--gpsd", "host:notaport")
        #expect(endpoint.status == 64 && endpoint.stderr == "offstage: error: --gpsd host:notaport: expected HOST:PORT, HOST or PORT (1 to 65535) (see offstage gps watch --help)\n")
        // Option errors of every gps command are usage errors (exit 64), named before anything starts.
        let routeSpeed = try offstage("gps", "feed", fixture, "--route-speed", "-1")
        #expect(routeSpeed.status == 64 && routeSpeed.stderr == "offstage: error: --route-speed must be a positive, finite number (got -1) (see offstage gps feed --help)\n")
        // As given, as --speed echoes it (--hold said -1.0 for -1).
        let hold = try offstage("gps", "feed", fixture, "--hold", "-1")
        #expect(hold.status == 64 && hold.stderr == "offstage: error: --hold takes 0 to 86400 seconds (got -1) (see offstage gps feed --help)\n", "\(hold.stderr)")
        // An output name that tells no format is a usage error like the others (it was exit 1).
        let unknownOutput = try offstage("gps", "convert", fixture, "out.xyz")
        #expect(unknownOutput.status == 64 && unknownOutput.stderr.hasPrefix("offstage: error: out.xyz: the output format cannot be told from the name (.gpx, .nmea or .json); give --to gpx, nmea or json"), "\(unknownOutput.stderr)")
        let format = try offstage("gps", "convert", fixture, "out.json", "--to", "kml")
        #expect(format.status == 64 && format.stderr == "offstage: error: --to kml: expected gpx, nmea or json (see offstage gps convert --help)\n")
        let feedEndpoint = try offstage("gps", "feed", fixture, "--gpsd", "nowhere:0")
        #expect(feedEndpoint.status == 64 && feedEndpoint.stderr == "offstage: error: --gpsd nowhere:0: expected HOST:PORT, HOST or PORT (1 to 65535) (see offstage gps feed --help)\n")
        // Negative values are values: they were taken for options ("Missing expected argument '<longitude>'").
        let south = try offstage("gps", "fix", "-91", "-0.5")
        #expect(south.status == 64 && south.stderr == "offstage: error: -91, -0.5 is not a valid coordinate (latitude -90 to 90, longitude -180 to 180) (see offstage gps fix --help)\n")
        let below = try offstage("gps", "fix", "-33.86", "151.2", "--altitude", "-30000")
        #expect(below.status == 64 && below.stderr == "offstage: error: altitude out of range (-30000; -20000 to 1000000) (see offstage gps fix --help)\n")
        // Decimal numbers only, as in fixtures: 0x10 was 16.
        let hex = try offstage("gps", "fix", "0x10", "2")
        #expect(hex.status == 64 && hex.stderr == "offstage: error: gps fix takes a latitude and a longitude in decimal degrees, not 0x10 2 (see offstage gps fix --help)\n")
        let hexAltitude = try offstage("gps", "fix", "1", "2", "--altitude", "0x10")
        #expect(hexAltitude.status == 64 && hexAltitude.stderr == "offstage: error: --altitude takes decimal metres, not 0x10 (see offstage gps fix --help)\n")
        let count = try offstage("gps", "fix", "-33.86")
        #expect(count.status == 64 && count.stderr == "offstage: error: gps fix takes a latitude and a longitude, got -33.86 (see offstage gps fix --help)\n")
        let mistyped = try offstage("gps", "fix", "-33.86", "151.2", "--altitde", "5")
        #expect(mistyped.status == 64 && mistyped.stderr == "offstage: error: unknown option '--altitde' (see offstage gps fix --help)\n")
        let afterTerminator = try offstage("gps", "fix", "--", "-33.86", "151.2", "--hold", "1")
        #expect(afterTerminator.status == 64 && afterTerminator.stderr == "offstage: error: --hold after -- is not an option: options go before it, and negative coordinates need no -- (see offstage gps fix --help)\n")
    }

    /// Decimal numbers only, as for the coordinates and --altitude: --speed,
    /// --hold and --route-speed took 0x10 for 16 (Swift's Double reads it).
    @Test func pacingAndTimingOptionsTakeDecimalNumbersOnly() throws {
        let dir = try makeTemporaryDirectory()
        let fixture = try write(gpxTrack(#"<trkpt lat="48.85" lon="2.35"><time>2024-05-06T07:30:00Z</time></trkpt>"#), to: "one.gpx", in: dir)
        let speed = try offstage("gps", "feed", fixture, "--speed", "0x10")
        #expect(speed.status == 64 && speed.stderr == "offstage: error: --speed 0x10: expected a number from 0.001 to 1000000, or max (see offstage gps feed --help)\n", "\(speed.stderr)")
        for text in ["0x1", "inf", "nan"] {
            let hold = try offstage("gps", "feed", fixture, "--hold", text)
            #expect(hold.status == 64 && hold.stderr == "offstage: error: --hold takes decimal seconds, not \(text) (see offstage gps feed --help)\n", "\(hold.stderr)")
        }
        for text in ["0x10", "inf", "nan"] {
            let routeSpeed = try offstage("gps", "convert", fixture, "-", "--to", "json", "--route-speed", text)
            #expect(routeSpeed.status == 64 && routeSpeed.stderr == "offstage: error: --route-speed takes decimal metres per second, not \(text) (see offstage gps convert --help)\n", "\(routeSpeed.stderr)")
            #expect(routeSpeed.stdout.isEmpty)
        }
    }

    /// `--control` means something only with `--gpsd` (a private gpsd has
    /// its own): it was ignored in silence. An empty `--gpsd` was taken for
    /// localhost:2947. Both are usage errors, before anything starts.
    @Test func aControlSocketWithoutANamedGPSDOrAnEmptyGPSDIsAUsageError() throws {
        let control = try offstage("gps", "fix", "1", "2", "--control", "/does/not/exist.sock")
        #expect(control.status == 64 && control.stderr == "offstage: error: --control names the control socket of the gpsd --gpsd names: give --gpsd HOST:PORT too, or leave --control out (see offstage gps fix --help)\n", "\(control.stderr)")
        let empty = try offstage("gps", "fix", "1", "2", "--gpsd", "", "--control", "/does/not/exist.sock")
        #expect(empty.status == 64 && empty.stderr == "offstage: error: --gpsd \"\": expected HOST:PORT, HOST or PORT (1 to 65535) (see offstage gps fix --help)\n", "\(empty.stderr)")
    }

    /// With port 2947 taken (Debian's socket-activated gpsd holds it), the
    /// private gpsd goes on another port, which `gps watch` (on 2947 by
    /// default) never finds: the feed says so and how to watch it.
    @Test func aPrivateGPSDOffPort2947SaysHowToWatchIt() {
        #expect(PrivateGPSD.started(on: GPSDEndpoint(host: "127.0.0.1", port: 2947), reading: "/dev/pts/3")
            == "Started a private gpsd on 127.0.0.1:2947 reading /dev/pts/3; it stops when this command ends.")
        #expect(PrivateGPSD.started(on: GPSDEndpoint(host: "127.0.0.1", port: 46191), reading: "/dev/pts/3")
            == "Started a private gpsd on 127.0.0.1:46191 reading /dev/pts/3; it stops when this command ends. "
                + "Port 2947 is taken (by another gpsd?): watch this one with offstage gps watch --gpsd 127.0.0.1:46191")
    }

    @Test func feedWithAPrivateGPSDDeliversEveryFix() throws {
        let fixture = repositoryRoot.appendingPathComponent("samples/fixtures/jitter-boundary.gpx").path
        let run = try offstage("gps", "feed", fixture, "--speed", "max", "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.first?.hasPrefix("Started a private gpsd on 127.0.0.1:") == true)
        #expect(lines.last?.hasPrefix("Fed 1495 fixes at max in ") == true)
        #expect(lines.last?.hasSuffix("gpsd reported 1495 of them.") == true)
    }

    /// A feed into a private gpsd, with `scratch` as its TMPDIR; at the
    /// recorded pace it runs for minutes. Returns once gpsd has started.
    func startFeed(in scratch: URL) throws -> (feed: RunningOffstage, gpsd: Int32) {
        let fixture = repositoryRoot.appendingPathComponent("samples/fixtures/jitter-boundary.gpx").path
        let feed = try RunningOffstage(["gps", "feed", fixture, "--quiet"], environment: ["TMPDIR": scratch.path])
        #expect(feed.awaitLine(containing: "Started a private gpsd", onStandardError: true))
        return (feed, try #require(feed.child(named: "gpsd")))
    }

    /// A feed ended by SIGTERM (or SIGHUP) stops its private gpsd and
    /// removes gpsd's directory before it dies of the signal; they used to
    /// outlive it, holding port 2947.
    @Test(arguments: [SIGTERM, SIGHUP]) func aKilledFeedLeavesNoGPSDBehind(signal: Int32) throws {
        let scratch = try makeTemporaryDirectory()
        let (feed, gpsd) = try startFeed(in: scratch)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).contains { $0.hasPrefix("offstage-gpsd-") })
        // gpsd was stopped and reaped before the feed died.
        try feed.expectDiesOf(signal, stopping: gpsd, emptying: scratch)
    }

    /// SIGKILL gives the feed no chance to stop its gpsd: gpsd's guard
    /// does, so nothing is left holding the port. gpsd's directory stays,
    /// and the next private gpsd's start removes it.
    @Test func aFeedKilledWithSIGKILLLeavesNoGPSDAndItsDirectoryIsSweptNextTime() throws {
        let scratch = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (feed, gpsd) = try startFeed(in: scratch)
        try feed.expectKilledOutrightStopping(gpsd, named: "gpsd")
        try feed.expectLeftDirectorySwept(prefix: "offstage-gpsd", in: scratch) {
            let (next, server) = try startFeed(in: scratch)
            return (next, server)
        }
    }
}
