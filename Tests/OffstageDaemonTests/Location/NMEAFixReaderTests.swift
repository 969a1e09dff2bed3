import Foundation
import OffstageCore
@testable import OffstageDaemon
import Testing

@Suite struct NMEAFixReaderTests {
    @Test func writerOutputReadsBackFixForFix() throws {
        let dir = try makeTemporaryDirectory()
        let track = sampleTrack(count: 50)
        let path = try write(track.map(NMEAFixWriter.sentences).joined(), to: "t.nmea", in: dir)
        let (fixes, summary) = try readAll(path)
        #expect(summary.fixes == 50 && summary.skipped == 0)
        for (a, b) in zip(track, fixes) {
            #expect(abs(a.latitude - b.latitude) < 1e-8 && abs(a.longitude - b.longitude) < 1e-8)
            #expect(abs(a.time - b.time) < 0.0005)
            #expect(b.altitude == a.altitude)
            #expect(abs((b.speed ?? 0) - 12.5) < 0.001 && b.course == 42.25)
        }
    }

    /// Fixes a day apart at the same time of day: each GGA (no date) was
    /// merged into the RMC before it, the day before, shifting every
    /// position by one fix without a word.
    @Test func fixesADayApartAtTheSameTimeOfDayStayApart() throws {
        let dir = try makeTemporaryDirectory()
        let noon = Double(LocationTimeFormat.daysFromCivil(year: 2024, month: 5, day: 1) * 86_400 + 12 * 3600)
        let track = (0..<3).map { day in
            LocationFix(latitude: 10 + Double(day), longitude: 20 + Double(day), time: noon + Double(day) * 86_400, altitude: 1 + Double(day))
        }
        // GGA first, as the writer once wrote and many receivers do: a
        // new RMC date alone would split RMC-first input.
        let ggaFirst = track.map { fix in
            let lines = rmcAndGGA(fix).split(separator: "\r\n")
            return lines.reversed().map { $0 + "\r\n" }.joined()
        }
        #expect(ggaFirst[0].hasPrefix("$GPGGA"))
        let path = try write(ggaFirst.joined(), to: "daily.nmea", in: dir)
        let (fixes, summary) = try readAll(path)
        #expect(summary.fixes == 3 && summary.skipped == 0)
        #expect(fixes.map(\.time) == track.map(\.time))
        #expect(fixes.map(\.latitude) == [10, 11, 12] && fixes.map(\.altitude) == [1, 2, 3])
    }

    /// Fixes a day apart at one place and one time of day stay apart too:
    /// GGA-only input with --nmea-date was folded into one fix in silence.
    @Test func fixesADayApartAtOnePlaceStayApart() throws {
        let dir = try makeTemporaryDirectory()
        let gga = (1...3).map { day in nmea("GPGGA,120000.000,4851.0,N,00221.0,E,1,08,1.0,3\(day).0,M,0.0,M,,") }
        var options = LocationFixtureReadOptions()
        options.assumedNMEADate = 1_714_521_600  // 2024-05-01
        let (fixes, summary) = try readAll(try write(gga.joined(separator: "\n") + "\n", to: "place.nmea", in: dir), options: options)
        // Each GGA is its own epoch; without a date to tell, days 2 and 3 are not later.
        #expect(fixes.map(\.altitude) == [31])
        #expect(summary.skipped == 2, "\(summary.issues)")
    }

    /// A receiver of several systems writes one epoch's GGA (or RMC) once
    /// per talker, `$GPGGA` and `$GNGGA`: one fix, in either order, without
    /// a bad line.
    @Test func oneEpochFromTwoTalkersIsOneFix() throws {
        let dir = try makeTemporaryDirectory()
        let fix = LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_550_400, altitude: 35, speed: 2, course: 90)
        let lines = rmcAndGGA(fix).split(separator: "\r\n").map(String.init)
        let (rmc, gga) = (lines[0], lines[1])
        let gnGGA = nmea(String(gga.dropFirst(3).prefix { $0 != "*" }).replacingOccurrences(of: "GGA,", with: "GNGGA,", options: .anchored))
        for order in [[rmc, gga, gnGGA], [gga, gnGGA, rmc]] {
            let (fixes, summary) = try readAll(try write(order.joined(separator: "\r\n") + "\r\n", to: "talkers.nmea", in: dir))
            #expect(summary.fixes == 1 && summary.skipped == 0, "\(order): \(summary.issues)")
            #expect(fixes.first?.altitude == 35 && fixes.first?.course == 90, "\(order)")
        }
    }

    /// Signs and short fields were read as numbers: `806.0` as 80° 6'
    /// (gpsd reads 8° 6'), `-405.0,S` as a northern latitude, negative
    /// minutes, a time `-10003.000` as the day before its date (which then
    /// cost the next good fix as time going backwards), a date `+10224`.
    @Test func signedOrShortFieldsAreBadLines() throws {
        let dir = try makeTemporaryDirectory()
        let text = [
            "GPRMC,120000.000,A,806.0,N,00206.0,E,,,010524,,,A", "GPRMC,120001.000,A,48-5.0,N,00206.0,E,,,010524,,,A",
            "GPRMC,120002.000,A,-405.0,S,00206.0,E,,,010524,,,A", "GPRMC,-10003.000,A,4806.0,N,00206.0,E,,,020524,,,A",
            "GPRMC,120004.000,A,4806.0,N,00206.0,E,,,+10524,,,A", "GPRMC,120005.000,A,4806.0,N,00206.0,E,,,010524,,,A",
        ].map(nmea).joined(separator: "\r\n") + "\r\n"
        let (fixes, summary) = try readAll(try write(text, to: "signs.nmea", in: dir))
        #expect(summary.issues.map(\.line) == [1, 2, 3, 4, 5], "\(summary.issues)")
        // The field is told, with the form expected (it said only "RMC without a valid time").
        #expect(summary.issues.map(\.message) == [
            "RMC without valid coordinates (\"806.0,N\"; expected ddmm.mmmm,N or S)",
            "RMC without valid coordinates (\"48-5.0,N\"; expected ddmm.mmmm,N or S)",
            "RMC without valid coordinates (\"-405.0,S\"; expected ddmm.mmmm,N or S)",
            "RMC without a valid time (\"-10003.000\"; expected hhmmss.sss)",
            "RMC without a valid date (\"+10524\"; expected ddmmyy)",
        ])
        #expect(fixes.count == 1 && fixes.first?.latitude == 48.1)
        // No fix and no time (a receiver's cold start, our own primer): no fix, not a bad line.
        let coldStart = ["GPGGA,,,,,,0,00,99.99,,,,,,", "GPRMC,,V,,,,,,,,,,N"].map(nmea).joined(separator: "\n") + "\n" + text
        let (_, coldSummary) = try readAll(try write(coldStart, to: "cold.nmea", in: dir))
        #expect(coldSummary.issues.map(\.line) == [3, 4, 5, 6, 7] && coldSummary.ignored == 2)
        #expect(NMEASentence.angle("4806.", "N", degreeDigits: 2) == 48.1)
        #expect(NMEASentence.angle("4806", "N", degreeDigits: 2) == 48.1)
        #expect(NMEASentence.timeOfDay("120004") == 43_204)
    }

    /// A read that fails is an error, not the end of the file: the fixes
    /// after it were lost without a word, even under --strict (a line too
    /// long for memory; here a directory, whose read fails with EISDIR).
    @Test func aFailedReadIsAnErrorNotTheEnd() throws {
        let dir = try makeTemporaryDirectory()
        var lines = try LocationLineReader(path: dir.path)
        do {
            var before = LocationReadSummary()
            before.fixes = 1
            let line = try lines.next(readBefore: before)
            Issue.record("read \(String(describing: line))")
        } catch {
            #expect(error.code == .unreadable)
            #expect(error.issue.description == "\(dir.path):1: cannot read the line: Is a directory")
            // What was read before the failure goes with it, so its bad lines are still told.
            #expect(error.readBefore.fixes == 1)
        }
        var empty = try LocationLineReader(path: try write("", to: "empty.nmea", in: dir))
        #expect(try empty.next(readBefore: LocationReadSummary()) == nil)
    }

    /// Times are kept to the millisecond, as by the other readers: times
    /// 0.3 ms apart were two fixes, written with one time, which our own
    /// reader then refused.
    @Test func timesUnderAMillisecondApartAreOneTime() throws {
        let dir = try makeTemporaryDirectory()
        let text = ["GPRMC,120000.0001,A,4806.0,N,00206.0,E,,,010524,,,A", "GPRMC,120000.0004,A,4806.0,N,00206.0,E,,,010524,,,A"]
            .map(nmea).joined(separator: "\n") + "\n"
        let (fixes, summary) = try readAll(try write(text, to: "sub.nmea", in: dir))
        #expect(fixes.map(\.time) == [Double(LocationTimeFormat.daysFromCivil(year: 2024, month: 5, day: 1) * 86_400 + 43_200)])
        #expect(summary.issues.map(\.message).first?.hasPrefix("time does not advance") == true)
        // Written to the millisecond, a time that rounds past the year 2079 is refused.
        let last = Double(LocationTimeFormat.daysFromCivil(year: 2080, month: 1, day: 1) * 86_400) - 0.0004
        #expect(NMEAFixWriter.problem(writing: LocationFix(latitude: 1, longitude: 2, time: last)) != nil)
    }

    @Test func writerProducesKnownSentences() {
        let time = Double(LocationTimeFormat.daysFromCivil(year: 1994, month: 3, day: 23) * 86_400 + 12 * 3600 + 35 * 60) + 19.5
        let fix = LocationFix(latitude: 48.1173, longitude: -11.516666667, time: time, altitude: 545.4, speed: 11.5, course: 84.4, horizontalAccuracy: 5)
        let lines = NMEAFixWriter.sentences(for: fix).split(separator: "\r\n").map(String.init)
        // The HDOP in a GSA before the epoch too: gpsd works out eph before its GGA.
        #expect(lines[0] == nmea("GPGSA,A,3,01,02,03,04,05,06,07,08,,,,,,1.0,"))
        // RMC first: its date starts the epoch, for gpsd as for the reader.
        #expect(lines[1] == nmea("GPRMC,123519.500,A,4807.038000,N,01131.000000,W,22.354,84.40,230394,,,A"))
        #expect(lines[2] == nmea("GPGGA,123519.500,4807.038000,N,01131.000000,W,1,08,1.0,545.40,M,0.0,M,,"))
        #expect(lines.count == 3)
    }

    @Test func anyTalkerAndClassicExampleSentences() throws {
        let dir = try makeTemporaryDirectory()
        let text = """
            $GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47
            \(nmea("GNRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W"))
            $GPGSV,2,1,08,01,40,083,46,02,17,308,41,12,07,344,39,14,22,228,45*75
            """
        let path = try write(text, to: "classic.nmea", in: dir)
        let (fixes, summary) = try readAll(path)
        #expect(summary.ignored == 1 && summary.skipped == 0)
        #expect(fixes.count == 1)
        let f = try #require(fixes.first)
        #expect(abs(f.latitude - 48.1173) < 1e-9)
        #expect(abs(f.longitude - 11.516666667) < 1e-8)
        #expect(f.altitude == 545.4)
        #expect(f.time == Double(LocationTimeFormat.daysFromCivil(year: 1994, month: 3, day: 23) * 86_400 + 12 * 3600 + 35 * 60 + 19))
    }

    @Test func badChecksumTruncatedLineAndGarbageAreSkippedAndCountedWithLines() throws {
        let dir = try makeTemporaryDirectory()
        let good = sampleTrack(count: 3).map(rmcAndGGA).joined()
        var lines = good.split(separator: "\r\n").map(String.init)
        lines[2] = String(lines[2].dropLast()) + (lines[2].hasSuffix("0") ? "1" : "0")  // break GGA #2's checksum
        lines.insert("$GPRMC,120000.000,A,4851.0", at: 4)                                // truncated
        lines.insert("hello", at: 5)
        // Cut within the checksum: truncated too, not a wrong sum ("bad checksum , expected 6B").
        lines.append(String(lines[lines.count - 1].dropLast(1)))
        lines.append(String(lines[lines.count - 2].dropLast(2)))
        let path = try write(lines.joined(separator: "\n"), to: "bad.nmea", in: dir)
        let (fixes, summary) = try readAll(path)
        #expect(summary.skipped == 5)
        #expect(summary.issues.map(\.line) == [3, 5, 6, 9, 10])
        #expect(summary.issues[0].message.hasPrefix("bad checksum"))
        #expect(summary.issues[1].message.contains("missing checksum"))
        #expect(summary.issues[2].description == "\(path):6: not an NMEA sentence")
        #expect(summary.issues[3...].map(\.message) == ["missing checksum (truncated line?)", "missing checksum (truncated line?)"])
        // Fix 2 still comes from its RMC.
        #expect(fixes.count == 3)
    }

    /// A right checksum with text after it is said to be so (it was a "bad
    /// checksum" equal to the one expected), and what the messages quote of
    /// the file is shown with its control characters escaped: a terminal
    /// escape in a fixture cleared the screen of whoever read the warning.
    @Test func textAfterAChecksumIsNamedAndControlCharactersAreEscaped() throws {
        let dir = try makeTemporaryDirectory()
        let good = rmcAndGGA(LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_550_400))
        let rmc = String(good.split(separator: "\r\n")[0])
        let text = rmc + "\u{1B}[2J\u{1B}]0;pwned\u{07}\n" + rmc.dropLast(2) + "1\u{1B}\n"
        let (_, summary) = try readAll(try write(text, to: "escape.nmea", in: dir))
        #expect(summary.issues.map(\.message) == [
            "text after the checksum: \"\\x1B[2J\\x1B]0;pwned\\x07\"", "bad checksum 1\\x1B, expected \(rmc.suffix(2))",
        ])
        #expect(LocationFixtureIssue(file: "f", line: 1, message: "lat is not a number (\"\u{0}\u{9B}x\")").message == "lat is not a number (\"\\x00\\x9Bx\")")
    }

    @Test func strictPolicyStopsAtTheFirstBadLine() throws {
        let dir = try makeTemporaryDirectory()
        let text = sampleTrack(count: 2).map(rmcAndGGA).joined() + "$GPRMC,broken*00\n"
            + sampleTrack(count: 1, start: 1_714_560_000).map(rmcAndGGA).joined()
        let path = try write(text, to: "strict.nmea", in: dir)
        var seen = 0
        let error = #expect(throws: LocationFixtureError.self) {
            _ = try NMEAFixReader(path: path, options: .init(policy: .strict)).read { _ in seen += 1 }
        }
        #expect(error?.issue.line == 5 && error?.code == .badInput)
        #expect(seen == 1)  // the second epoch was still pending when the bad line came
    }

    @Test func aValueOutOfRangeIsBlamedOnTheSentenceThatHasIt() throws {
        let dir = try makeTemporaryDirectory()
        let text = [
            nmea("GPGGA,120000.000,4851.0000,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),
            nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,9999999.0,42.25,010524,,,A"),  // speed
            nmea("GPRMC,120001.000,A,4851.0010,N,00221.0000,E,1.0,42.25,010524,,,A"),
            nmea("GPGGA,120001.000,4851.0010,N,00221.0000,E,1,08,1.0,9999999.0,M,0.0,M,,"),  // altitude
            nmea("GPGGA,120002.000,4851.0020,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),
            nmea("GPRMC,120002.000,A,4851.0020,N,00221.0000,E,1.0,42.25,010524,,,A"),
        ].joined(separator: "\n")
        let path = try write(text, to: "range.nmea", in: dir)
        let (fixes, summary) = try readAll(path)
        #expect(fixes.map(\.time) == [1_714_564_802])
        #expect(summary.issues.map(\.line) == [2, 4])
        try #require(summary.issues.count == 2)
        #expect(summary.issues[0].message.hasPrefix("speed out of range"))
        #expect(summary.issues[1].message.hasPrefix("altitude out of range"))
        let error = #expect(throws: LocationFixtureError.self) {
            _ = try NMEAFixReader(path: path, options: .init(policy: .strict)).read { _ in }
        }
        #expect(error?.issue.line == 2)
    }

    /// An RMC speed out of range is told as written, in knots: -5 was told
    /// as -2.5722222222222224 (m/s, with float noise).
    @Test func anRMCSpeedOutOfRangeIsToldAsWritten() throws {
        let dir = try makeTemporaryDirectory()
        let text = nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,-5,42.25,010524,,,A") + "\n"
        let (fixes, summary) = try readAll(try write(text, to: "speed.nmea", in: dir))
        #expect(fixes.isEmpty)
        #expect(summary.issues.map(\.message) == ["speed out of range (-5 knots; 0 to 194384.4 knots)"])
    }

    /// A GGA HDOP out of range is told as written: -1 was told as a
    /// horizontal accuracy of -5.0 (metres, which the file does not hold).
    @Test func aGGAHDOPOutOfRangeIsToldAsWritten() throws {
        let dir = try makeTemporaryDirectory()
        let text = [
            nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,1.0,42.25,010524,,,A"),
            nmea("GPGGA,120000.000,4851.0000,N,00221.0000,E,1,08,-1,35.0,M,0.0,M,,"),
        ].joined(separator: "\n") + "\n"
        let (fixes, summary) = try readAll(try write(text, to: "hdop.nmea", in: dir))
        #expect(fixes.isEmpty)
        #expect(summary.issues.map(\.message) == ["HDOP out of range (-1; 0 to 2000000)"])
    }

    /// Swift's Double("0x10") is 16: a hexadecimal speed read as 8.2 m/s,
    /// and text in an optional field was dropped without a word. A value
    /// that is not a decimal number is bad input at its line; an empty
    /// field is a value not known.
    @Test func optionalValuesThatAreNotDecimalNumbersAreBadInput() throws {
        let dir = try makeTemporaryDirectory()
        let text = [
            nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,1.0,42.25,010524,,,A"),
            nmea("GPGGA,120000.000,4851.0000,N,00221.0000,E,1,08,0x2,35.0,M,0.0,M,,"),  // HDOP
            nmea("GPRMC,120001.000,A,4851.0010,N,00221.0000,E,0x10,42.25,010524,,,A"),  // speed
            nmea("GPGGA,120001.000,4851.0010,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),
            nmea("GPRMC,120002.000,A,4851.0020,N,00221.0000,E,1.0,42.25,010524,,,A"),
            nmea("GPGGA,120002.000,4851.0020,N,00221.0000,E,1,08,1.0,inf,M,0.0,M,,"),  // altitude
            nmea("GPRMC,120003.000,A,4851.0030,N,00221.0000,E,1.0,nan,010524,,,A"),  // course
            nmea("GPGGA,120003.000,4851.0030,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),
        ].joined(separator: "\n")
        let (fixes, summary) = try readAll(try write(text, to: "hex.nmea", in: dir))
        #expect(summary.issues.map(\.message) == [
            "GGA HDOP \"0x2\" is not a number", "RMC speed \"0x10\" is not a number",
            "GGA altitude \"inf\" is not a number", "RMC course \"nan\" is not a number",
        ])
        #expect(summary.issues.map(\.line) == [2, 3, 6, 7])
        // Each epoch's good sentence stands alone: no value from the bad one.
        try #require(fixes.count == 4)
        #expect(fixes[0].horizontalAccuracy == nil && fixes[0].altitude == nil)
        #expect(fixes[1].speed == nil && fixes[1].altitude == 35)
        #expect(fixes[2].altitude == nil && fixes[2].speed == 1852.0 / 3600)
        #expect(fixes[3].course == nil)
    }

    /// Lines 3 and 4 are bad: line 3's epoch goes back in time, which is
    /// known only once the epoch is complete, after line 4.
    func epochWithABadLineInside(in dir: URL) throws -> String {
        let a = sampleTrack(count: 3)
        let sentences = [a[1], a[0], a[2]].map { rmcAndGGA($0).split(separator: "\r\n").map(String.init) }
        let lines = sentences[0] + [sentences[1][0], "hello", sentences[1][1]] + sentences[2]
        return try write(lines.joined(separator: "\n"), to: "inside.nmea", in: dir)
    }

    @Test func issuesComeInTheOrderOfTheirLines() throws {
        let path = try epochWithABadLineInside(in: try makeTemporaryDirectory())
        let (fixes, summary) = try readAll(path)
        #expect(fixes.count == 2)
        #expect(summary.issues.map(\.line) == [3, 4])
        try #require(summary.issues.count == 2)
        #expect(summary.issues[0].message.hasPrefix("time goes backwards"))
        #expect(summary.issues[1].message == "not an NMEA sentence")
    }

    @Test func strictPolicyStopsAtTheFirstBadLineOfAnEpoch() throws {
        let path = try epochWithABadLineInside(in: try makeTemporaryDirectory())
        var seen = 0
        let error = #expect(throws: LocationFixtureError.self) {
            _ = try NMEAFixReader(path: path, options: .init(policy: .strict)).read { _ in seen += 1 }
        }
        #expect(error?.issue.line == 3 && error?.issue.message.hasPrefix("time goes backwards") == true)
        #expect(seen == 1)
    }

    @Test func badLinesInsideAnEpochAreCountedPastTheIssuesKept() throws {
        let dir = try makeTemporaryDirectory()
        let lines = rmcAndGGA(sampleTrack(count: 1)[0]).split(separator: "\r\n").map(String.init)
        let text = ([lines[0]] + Array(repeating: "hello", count: 5) + [lines[1]]).joined(separator: "\n")
        var options = LocationFixtureReadOptions()
        options.maximumIssuesKept = 2
        let (fixes, summary) = try readAll(try write(text, to: "many.nmea", in: dir), options: options)
        #expect(fixes.count == 1)
        #expect(summary.skipped == 5 && summary.issues.map(\.line) == [2, 3])
    }

    @Test func aDateLostWithABadRMCIsWarnedInFileOrderButStrictNamesTheBadLine() throws {
        let dir = try makeTemporaryDirectory()
        let text = nmea("GPGGA,120000.000,4851.0,N,00221.0,E,1,08,1.0,35.0,M,0.0,M,,") + "\n$GPRMC,120000*00\n"
        let path = try write(text, to: "lost.nmea", in: dir)
        let (_, summary) = try readAll(path)
        #expect(summary.issues.map(\.line) == [1, 2])
        let error = #expect(throws: LocationFixtureError.self) {
            _ = try NMEAFixReader(path: path, options: .init(policy: .strict)).read { _ in }
        }
        #expect(error?.issue.line == 2 && error?.issue.message.hasPrefix("bad checksum") == true)
    }

    @Test func anImpossibleDateIsBadInputNotTheNextMonth() throws {
        let dir = try makeTemporaryDirectory()
        let text = [
            nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,1.0,42.25,290223,,,A"),
            nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,1.0,42.25,310424,,,A"),
            nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,1.0,42.25,290224,,,A"),
        ].joined(separator: "\n")
        let path = try write(text, to: "date.nmea", in: dir)
        let (fixes, summary) = try readAll(path)
        #expect(fixes.map(\.time) == [Double(LocationTimeFormat.daysFromCivil(year: 2024, month: 2, day: 29) * 86_400 + 43_200)])
        #expect(summary.issues.map(\.description) == [
            "\(path):1: RMC date 290223 does not exist (February 2023 has 28 days)",
            "\(path):2: RMC date 310424 does not exist (April 2024 has 30 days)",
        ])
    }

    @Test func aFixWithoutAccuracyIsWrittenWithAnEmptyHDOPAndReadBackWithoutOne() throws {
        let dir = try makeTemporaryDirectory()
        var fix = sampleTrack(count: 1)[0]
        fix.horizontalAccuracy = nil
        let sentences = NMEAFixWriter.sentences(for: fix)
        #expect(sentences.contains("\r\n$GPGGA,080000.000,4851.000000,N,00221.000000,E,1,08,,35.00,M,0.0,M,,*"))
        // No accuracy, no GSA: it would carry an HDOP.
        #expect(sentences.hasPrefix("$GPRMC"))
        let (fixes, _) = try readAll(try write(sentences, to: "noacc.nmea", in: dir))
        #expect(fixes.count == 1 && fixes.first?.horizontalAccuracy == nil)
        fix.horizontalAccuracy = 12.5
        #expect(NMEAFixWriter.sentences(for: fix).contains("\r\n$GPGGA,080000.000,4851.000000,N,00221.000000,E,1,08,2.5,35.00,M,0.0,M,,*"))
    }

    @Test func timeGoingBackwardsIsReported() throws {
        let dir = try makeTemporaryDirectory()
        let a = sampleTrack(count: 3)
        let text = [a[0], a[2], a[1]].map(rmcAndGGA).joined()
        let path = try write(text, to: "back.nmea", in: dir)
        let (fixes, summary) = try readAll(path)
        #expect(fixes.map(\.time) == [a[0].time, a[2].time])
        #expect(summary.issues.first?.line == 5 && summary.issues.first?.message.hasPrefix("time goes backwards") == true)
    }

    @Test func ggaOnlyNeedsADateAndRollsOverAtMidnight() throws {
        let dir = try makeTemporaryDirectory()
        let text = [
            nmea("GPGGA,235959.000,4851.0000,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),
            nmea("GPGGA,000000.000,4851.0010,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),
        ].joined(separator: "\n")
        let path = try write(text, to: "gga.nmea", in: dir)
        let (none, summary) = try readAll(path)
        #expect(none.isEmpty && summary.skipped == 2)
        #expect(summary.issues[0].message == "time of day without a date (no RMC sentence before it; --nmea-date YYYY-MM-DD gives one)")
        var options = LocationFixtureReadOptions()
        options.assumedNMEADate = 1_714_521_600  // 2024-05-01
        let (fixes, _) = try readAll(path, options: options)
        #expect(fixes.map(\.time) == [1_714_521_600 + 86_399, 1_714_608_000])
    }

    /// A GGA a second earlier is time going backwards on the same day. It
    /// was taken for a midnight rollover: that fix came a day late, and
    /// every later fix was refused as going backwards from it.
    @Test func aStrayEarlierGGAIsTimeGoingBackwardsNotTheNextDay() throws {
        let dir = try makeTemporaryDirectory()
        func gga(_ time: String) -> String { nmea("GPGGA,\(time),4851.0000,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,") }
        let text = ["073000.000", "073001.000", "073002.000", "073001.000", "073003.000", "073004.000"].map(gga)
            .joined(separator: "\n")
        var options = LocationFixtureReadOptions()
        options.assumedNMEADate = 1_714_521_600  // 2024-05-01
        let (fixes, summary) = try readAll(try write(text, to: "stray.nmea", in: dir), options: options)
        let day = 1_714_521_600.0 + 7.5 * 3600
        #expect(fixes.map(\.time) == [day, day + 1, day + 2, day + 3, day + 4])
        #expect(summary.issues.map(\.line) == [4])
        #expect(summary.issues.first?.message.hasPrefix("time goes backwards") == true)
        // In a dated log, a stray GGA-only epoch no longer drops the rest.
        let track = sampleTrack(count: 4)
        var lines = track.map(rmcAndGGA).joined().split(separator: "\r\n").map(String.init)
        lines.insert(lines[0], at: 4)  // the first GGA again, after the second epoch
        let (dated, datedSummary) = try readAll(try write(lines.joined(separator: "\n"), to: "dated.nmea", in: dir))
        #expect(dated.map(\.time) == track.map(\.time))
        #expect(datedSummary.issues.map(\.line) == [5])
    }

    /// An RMC's date counts even when its epoch is refused for a bad value:
    /// the GGA-only epochs after it were refused as having no date.
    @Test func aRefusedEpochsRMCStillDatesTheGGAOnlyOnesAfterIt() throws {
        let dir = try makeTemporaryDirectory()
        let text = [
            nmea("GPGGA,120000.000,4851.0000,N,00221.0000,E,1,08,1.0,99999999.0,M,0.0,M,,"),
            nmea("GPRMC,120000.000,A,4851.0000,N,00221.0000,E,,,010524,,,A"),
            nmea("GPGGA,120001.000,4851.0010,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,"),
        ].joined(separator: "\n")
        let (fixes, summary) = try readAll(try write(text, to: "refused.nmea", in: dir))
        let noonAndASecond: Double = 1_714_521_600 + 12 * 3600 + 1
        #expect(fixes.map(\.time) == [noonAndASecond])
        #expect(summary.issues.count == 1 && summary.issues.first?.message.hasPrefix("altitude out of range") == true, "\(summary.issues)")
    }

    /// Trailing blanks after the checksum and a byte order mark before the
    /// first sentence cost that sentence (`bad checksum 41 , expected 41`).
    @Test func trailingBlanksAndAByteOrderMarkAreNotPartOfTheSentence() throws {
        let dir = try makeTemporaryDirectory()
        let track = sampleTrack(count: 2)
        let lines = track.map(rmcAndGGA).joined().split(separator: "\r\n").map { $0 + " \t\r" }
        let path = try write("\u{FEFF}" + lines.joined(separator: "\n"), to: "blanks.nmea", in: dir)
        let (fixes, summary) = try readAll(path)
        #expect(summary.skipped == 0, "\(summary.issues)")
        #expect(fixes.map(\.time) == track.map(\.time))
        #expect(fixes.first?.altitude == track.first?.altitude)
    }

    /// Lines that end in a lone CR (classic Mac OS software): the whole file
    /// was one line, told as a bad checksum. Lines are counted as such, and
    /// gpsd JSON is read the same way.
    @Test func linesEndingInALoneCarriageReturnAreLines() throws {
        let dir = try makeTemporaryDirectory()
        let track = sampleTrack(count: 2)
        let lines = track.map(rmcAndGGA).joined().split(separator: "\r\n").map(String.init) + ["$GPRMC,garbage*00"]
        let (fixes, summary) = try readAll(try write(lines.joined(separator: "\r") + "\r", to: "cr.nmea", in: dir))
        #expect(fixes.map(\.time) == track.map(\.time))
        #expect(summary.issues.map(\.description) == ["\(dir.path)/cr.nmea:5: bad checksum 00, expected 12"], "\(summary.issues)")
        let json = track.map { GPSDJSONFixWriter.line(for: $0) }.joined().replacingOccurrences(of: "\n", with: "\r")
        let (jsonFixes, jsonSummary) = try readAll(try write(json, to: "cr.json", in: dir))
        #expect(jsonFixes.map(\.time) == track.map(\.time) && jsonSummary.skipped == 0, "\(jsonSummary.issues)")
        // `\r\r\n` (Windows text mode) is read by its LFs: taken for CR
        // lines, each line counted twice.
        let (doubled, doubledSummary) = try readAll(try write(lines.joined(separator: "\r\r\n") + "\r\r\n", to: "crcrlf.nmea", in: dir))
        #expect(doubled.map(\.time) == track.map(\.time))
        #expect(doubledSummary.issues.map(\.description) == ["\(dir.path)/crcrlf.nmea:5: bad checksum 00, expected 12"], "\(doubledSummary.issues)")
    }

    /// A leap second (235960) is placed before midnight; it took midnight's
    /// time, and the real 000000 epoch was refused as time standing still.
    @Test func aLeapSecondFallsBeforeMidnight() throws {
        let dir = try makeTemporaryDirectory()
        func epoch(_ time: String, _ date: String) -> String {
            nmea("GPGGA,\(time),4851.0000,N,00221.0000,E,1,08,1.0,35.0,M,0.0,M,,") + "\n"
                + nmea("GPRMC,\(time),A,4851.0000,N,00221.0000,E,,,\(date),,,A")
        }
        let text = [epoch("235959.000", "311216"), epoch("235960.000", "311216"), epoch("000000.000", "010117")]
            .joined(separator: "\n")
        let (fixes, summary) = try readAll(try write(text, to: "leap.nmea", in: dir))
        let midnight = Double(LocationTimeFormat.daysFromCivil(year: 2017, month: 1, day: 1) * 86_400)
        #expect(summary.skipped == 0, "\(summary.issues)")
        #expect(fixes.map(\.time) == [midnight - 1, midnight - 60 + 59.999, midnight])
        // A 61st second anywhere else is bad input.
        let (other, otherSummary) = try readAll(try write(epoch("120060.000", "311216"), to: "bad.nmea", in: dir))
        #expect(other.isEmpty && otherSummary.skipped > 0)
    }

    @Test func sentencesWithoutAFixAreIgnored() throws {
        let dir = try makeTemporaryDirectory()
        let text = [
            nmea("GPRMC,120000.000,V,,,,,,,010524,,,N"),
            nmea("GPGGA,120000.000,,,,,0,00,99.9,,,,,,"),
        ].joined(separator: "\n")
        let (fixes, summary) = try readAll(try write(text, to: "nofix.nmea", in: dir))
        #expect(fixes.isEmpty && summary.ignored == 2 && summary.skipped == 0)
    }
}
