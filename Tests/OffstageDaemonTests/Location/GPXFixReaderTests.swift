import Foundation
import OffstageCore
@testable import OffstageDaemon
import Synchronization
import Testing

@Suite struct GPXFixReaderTests {
    @Test func readsTrackPointsWithTimeAndElevation() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <?xml version="1.0"?>
            <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
             <trk><name>x</name><trkseg>
              <trkpt lat="48.85" lon="2.35"><ele>35.5</ele><time>2024-05-01T08:00:00Z</time></trkpt>
              <trkpt lat="48.8501" lon="2.3501"><ele>36</ele><time>2024-05-01T08:00:01.250Z</time><extensions><speed>9</speed></extensions></trkpt>
              <trkpt lat="48.8502" lon="2.3502"><time>2024-05-01T10:00:02+02:00</time></trkpt>
             </trkseg></trk>
            </gpx>
            """
        let (fixes, summary) = try readAll(try write(gpx, to: "t.gpx", in: dir))
        #expect(summary.fixes == 3 && summary.skipped == 0)
        #expect(fixes.map(\.time) == [1_714_550_400, 1_714_550_401.25, 1_714_550_402])
        #expect(fixes[0].altitude == 35.5 && fixes[2].altitude == nil)
        // Speed and course also come from inside <extensions>.
        #expect(fixes[1].speed == 9 && fixes[0].speed == nil)
    }

    /// GPX 1.1 has no speed or course: the writer puts them in Garmin's
    /// TrackPointExtension, and a conversion to GPX lost them before.
    @Test func speedAndCourseSurviveAGPXRoundTrip() throws {
        let dir = try makeTemporaryDirectory()
        let fixes = [
            LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_550_400, altitude: 35, speed: 12.345, course: 271.5),
            LocationFix(latitude: 48.8501, longitude: 2.3501, time: 1_714_550_401, speed: 0),
            LocationFix(latitude: 48.8502, longitude: 2.3502, time: 1_714_550_402),
        ]
        let gpx = gpxDocument(fixes, name: "trip")
        #expect(gpx.contains("<gpxtpx:speed>12.345</gpxtpx:speed><gpxtpx:course>271.50</gpxtpx:course>"))
        let (read, summary) = try readAll(try write(gpx, to: "trip.gpx", in: dir))
        #expect(summary.fixes == 3 && summary.skipped == 0)
        #expect(read.map(\.speed) == [12.345, 0, nil])
        #expect(read.map(\.course) == [271.5, nil, nil])
        #expect(read.map(\.altitude) == [35, nil, nil])
    }

    /// Extension values are extras from known places: one that is not a
    /// number or is out of range (CoreLocation's -1), or that sits in some
    /// other element (a wind speed), is left out and the point stays good.
    @Test func extensionSpeedsAndCoursesAreExtrasFromKnownPlaces() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1" creator="test" xmlns:x="urn:x">
             <trk><trkseg>
              <trkpt lat="1" lon="2"><time>2024-05-01T08:00:00Z</time><extensions><x:course>Back nine</x:course><x:speed>-1</x:speed></extensions></trkpt>
              <trkpt lat="1" lon="2.001"><time>2024-05-01T08:00:01Z</time><extensions><x:wind><x:speed>12</x:speed></x:wind><x:TrackPointExtension><x:speed>5</x:speed><x:course>360</x:course></x:TrackPointExtension></extensions></trkpt>
              <trkpt lat="1" lon="2.002"><time>2024-05-01T08:00:02Z</time><extensions><x:a><x:b><x:speed>9</x:speed></x:b></x:a><course>12.5</course></extensions></trkpt>
             </trkseg></trk>
            </gpx>
            """
        let (fixes, summary) = try readAll(try write(gpx, to: "extras.gpx", in: dir))
        #expect(summary.fixes == 3 && summary.skipped == 0, "\(summary.issues)")
        #expect(fixes.map(\.speed) == [nil, 5, nil])
        #expect(fixes.map(\.course) == [nil, 360, 12.5])
    }

    /// CDATA is text: some exporters wrap every value in it.
    @Test func valuesInCDATAAreRead() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1" creator="test">
             <trk><trkseg>
              <trkpt lat="1" lon="2"><ele><![CDATA[12.5]]></ele><time><![CDATA[2024-05-01T08:00:00Z]]></time></trkpt>
             </trkseg></trk>
            </gpx>
            """
        let (fixes, summary) = try readAll(try write(gpx, to: "cdata.gpx", in: dir))
        #expect(summary.fixes == 1 && summary.skipped == 0, "\(summary.issues)")
        #expect(fixes.first?.time == 1_714_550_400 && fixes.first?.altitude == 12.5)
    }

    /// The schema's course is below 360: the writer writes north as 0.
    @Test func aCourseOf360IsWrittenAsNorth() {
        for course in [360, 359.999] {
            let point = GPXFixWriter.point(LocationFix(latitude: 1, longitude: 2, time: 0, course: course))
            #expect(point.contains("<gpxtpx:course>0.00</gpxtpx:course>"), "\(point)")
        }
    }

    /// A point's own <speed> (GPX 1.0) wins over one in its extensions.
    @Test func aPointsOwnSpeedWinsOverItsExtensions() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.0" creator="test" xmlns:x="urn:x">
             <trk><trkseg>
              <trkpt lat="1" lon="2"><time>2024-05-01T08:00:00Z</time><speed>3</speed><course>90</course><extensions><x:TrackPointExtension><x:speed>7</x:speed></x:TrackPointExtension></extensions></trkpt>
              <trkpt lat="1" lon="2.001"><time>2024-05-01T08:00:01Z</time><extensions><x:TrackPointExtension><x:speed>7</x:speed><x:course>45</x:course></x:TrackPointExtension></extensions><speed>4</speed></trkpt>
             </trkseg></trk>
            </gpx>
            """
        let (fixes, _) = try readAll(try write(gpx, to: "own.gpx", in: dir))
        #expect(fixes.map(\.speed) == [3, 4])
        #expect(fixes.map(\.course) == [90, 45])
    }

    /// Times less than a millisecond apart are one time (times are kept to
    /// the millisecond), and the message says so: it read as a time that
    /// did not advance, quoting the same time twice.
    @Test func timesUnderAMillisecondApartAreSaidToBeEqualToTheMillisecond() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = gpxTrack(
            #"<trkpt lat="1" lon="2"><time>2024-05-01T06:00:00.0001Z</time></trkpt>"#,
            #"<trkpt lat="1" lon="2"><time>2024-05-01T06:00:00.0004Z</time></trkpt>"#)
        let (fixes, summary) = try readAll(try write(gpx, to: "sub.gpx", in: dir))
        #expect(fixes.count == 1)
        #expect(summary.issues.map(\.message) == [
            "time does not advance (to the millisecond, as times are kept) (2024-05-01T06:00:00.000Z after 2024-05-01T06:00:00.000Z)",
        ])
    }

    /// A point's own <speed> or <course> that is not a number or out of
    /// range is left out, as one in extensions is, and the point stays (as
    /// location.md says); it dropped the point.
    @Test func aPointsOwnBadSpeedOrCourseIsLeftOut() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = gpxTrack(
            #"<trkpt lat="1" lon="2"><time>2024-05-01T08:00:00Z</time><speed>-3</speed><course>abc</course></trkpt>"#,
            #"<trkpt lat="1" lon="2.001"><time>2024-05-01T08:00:01Z</time><speed>x</speed><course>720</course><extensions><speed>5</speed></extensions></trkpt>"#)
        let (fixes, summary) = try readAll(try write(gpx, to: "own-bad.gpx", in: dir))
        #expect(summary.skipped == 0 && fixes.count == 2)
        #expect(fixes.map(\.speed) == [nil, 5])
        #expect(fixes.map(\.course) == [nil, nil])
    }

    @Test func routesAndWaypointsAreTimedBySpeed() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1" creator="Xcode">
              <wpt lat="0" lon="0"><name>A</name></wpt>
              <wpt lat="0.01" lon="0"/>
              <rte><rtept lat="0.02" lon="0"/></rte>
            </gpx>
            """
        var options = LocationFixtureReadOptions()
        options.routeStartTime = 1000
        let (fixes, _) = try readAll(try write(gpx, to: "w.gpx", in: dir), options: options)
        #expect(fixes.count == 3)
        #expect(fixes[0].time == 1000)
        // 0.01° of latitude at the equator is 1105.74 m: 55.287 s at 20 m/s.
        #expect(abs(fixes[1].time - 1055.287) < 0.001)
        options.routeSpeed = 10
        let (slow, _) = try readAll(try write(gpx, to: "w2.gpx", in: dir), options: options)
        #expect(abs(slow[2].time - (1000 + 2 * 110.574)) < 0.002)
    }

    /// A route timed at a tiny speed, or from a start late in 9999, reached
    /// times no four-digit year holds: writing them trapped (past Int.max
    /// milliseconds) or gave a time no reader takes back (year 10000).
    /// Such points are bad input, at their lines.
    @Test func routeTimesNoYearHoldsAreBadInput() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1" creator="Xcode">
              <wpt lat="0" lon="0"/>
              <wpt lat="0.001" lon="0"/>
            </gpx>
            """
        let path = try write(gpx, to: "far.gpx", in: dir)
        var options = LocationFixtureReadOptions()
        options.routeSpeed = 1e-300
        var (fixes, summary) = try readAll(path, options: options)
        #expect(fixes.count == 1 && summary.skipped == 1)
        #expect(summary.issues.first?.line == 3)
        #expect(summary.issues.first?.message.hasPrefix("time out of range (") == true, "\(summary.issues)")
        options = LocationFixtureReadOptions()
        options.routeStartTime = try #require(LocationTimeFormat.parseISO8601("9999-12-31T23:59:59Z"))
        (fixes, summary) = try readAll(path, options: options)
        // The first point, at the start, is the last second of 9999; the next would be in 10000.
        #expect(fixes.map { LocationTimeFormat.iso8601($0.time) } == ["9999-12-31T23:59:59.000Z"])
        #expect(summary.issues.map(\.line) == [3])
    }

    /// Swift's Double("0x10") is 16: a latitude written so was 16°. XML
    /// Schema's decimals may have spaces around them, which were refused.
    @Test func coordinatesAndValuesAreDecimalNumbers() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = gpxTrack(
            #"<trkpt lat="0x10" lon="2.35"><time>2024-06-01T08:00:00Z</time></trkpt>"#,
            #"<trkpt lat=" 48.5 " lon="2.35"><time>2024-06-01T08:00:01Z</time></trkpt>"#,
            #"<trkpt lat="48.5" lon="2.35"><ele>0x10</ele><time>2024-06-01T08:00:02Z</time></trkpt>"#,
            #"<trkpt lat="48.5" lon="2.35"><ele>inf</ele><time>2024-06-01T08:00:03Z</time></trkpt>"#)
        let (fixes, summary) = try readAll(try write(gpx, to: "hex.gpx", in: dir))
        #expect(fixes.map(\.latitude) == [48.5])
        #expect(summary.issues.map(\.message) == [
            "<trkpt> with a bad attribute lat=\"0x10\"", "<ele> \"0x10\" is not a number", "<ele> \"inf\" is not a number",
        ])
        #expect(summary.issues.map(\.line) == [2, 4, 5])
    }

    /// A device's saved waypoints before its (timed) track are places, not
    /// part of the path: they were timed at `--start` and pushed the whole
    /// track aside as going backwards. Timed waypoints stay.
    @Test func untimedWaypointsAndRoutesInAFileWithATrackAreLeftOut() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1" creator="Garmin">
              <wpt lat="48.8566" lon="2.3522"><name>Start</name></wpt>
              <wpt lat="48.8567" lon="2.3523"><time>2024-06-01T07:59:00Z</time></wpt>
              <rte><rtept lat="48.86" lon="2.36"/></rte>
              <trk><trkseg>
                <trkpt lat="48.85" lon="2.35"><time>2024-06-01T08:00:00Z</time></trkpt>
                <trkpt lat="48.8501" lon="2.3501"><time>2024-06-01T08:00:01Z</time></trkpt>
              </trkseg></trk>
            </gpx>
            """
        let (fixes, summary) = try readAll(try write(gpx, to: "garmin.gpx", in: dir))
        let eight = 1_717_228_800.0
        #expect(fixes.map(\.time) == [eight - 60, eight, eight + 1])
        #expect(summary.skipped == 0 && summary.ignored == 2)
    }

    /// A pipe can be read once only: no look for a track first (it took
    /// the first points away from the read), and its points come in
    /// document order.
    @Test func aGPXPipeIsReadOnceInDocumentOrder() throws {
        let dir = try makeTemporaryDirectory()
        let fifo = dir.appendingPathComponent("pipe.gpx").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let gpx = """
            <gpx version="1.1">
              <wpt lat="48.8566" lon="2.3522"><name>Start</name></wpt>
              <trk><trkseg>
                <trkpt lat="48.85" lon="2.35"><time>2024-06-01T08:00:00Z</time></trkpt>
                <trkpt lat="48.8501" lon="2.3501"><time>2024-06-01T08:00:01Z</time></trkpt>
              </trkseg></trk>
            </gpx>
            """
        let writer = Thread {
            guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
            handle.write(Data(gpx.utf8))
            try? handle.close()
        }
        writer.start()
        // Read on a thread of its own: a second open of the pipe (a second
        // read) would wait for a writer for good, and the test would hang
        // instead of failing.
        let read = Mutex<Result<[LocationFix], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let outcome = Result { try readAll(fifo).0 }
            read.withLock { $0 = outcome }
            done.signal()
        }.start()
        let finished = done.wait(timeout: .now() + 30) == .success
        #expect(finished, "the read of the pipe never ended")
        if !finished {
            // Frees a read waiting to open the pipe; refused at once (not
            // waited for) if nobody has it open for reading.
            let release = open(fifo, O_WRONLY | O_NONBLOCK)
            if release >= 0 { close(release) }
        }
        let fixes = try read.withLock { $0 }?.get()
        #expect(fixes?.map(\.time) == [1_704_067_200, 1_717_228_800, 1_717_228_801])
    }

    /// GPX times are UTC: one without a zone is read as UTC (it was bad
    /// input); `+hhmm` is an offset as `+hh:mm` is; an offset of a day or
    /// more is refused (`+99:99` moved the time by four days); a leap second
    /// falls before midnight.
    @Test func timesWithoutAZoneAreUTCAndOffsetsAreChecked() {
        let eight = 1_717_228_800.0
        #expect(LocationTimeFormat.parseISO8601("2024-06-01T08:00:00") == eight)
        #expect(LocationTimeFormat.parseISO8601("2024-06-01T10:00:00+0200") == eight)
        #expect(LocationTimeFormat.parseISO8601("2024-06-01T10:00:00+02:00") == eight)
        #expect(LocationTimeFormat.parseISO8601("2024-06-01T06:30:00.5-01:30") == eight + 0.5)
        #expect(LocationTimeFormat.parseISO8601("2024-06-01T08:00:00+99:99") == nil)
        #expect(LocationTimeFormat.parseISO8601("2024-06-01T08:00:00+24:00") == nil)
        #expect(LocationTimeFormat.parseISO8601("2024-06-01T08:00:00+02") == nil)
        let midnight = Double(LocationTimeFormat.daysFromCivil(year: 2017, month: 1, day: 1) * 86_400)
        #expect(LocationTimeFormat.parseISO8601("2016-12-31T23:59:60Z") == midnight - 60 + 59.999)
        #expect(LocationTimeFormat.parseISO8601("2017-01-01T00:59:60.5+01:00") == midnight - 60 + 59.999)
        #expect(LocationTimeFormat.parseISO8601("2016-12-31T12:59:60Z") == nil)
    }

    @Test func pointsWithoutCoordinatesOrTimeAreSkippedWithTheirLine() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1">
            <trk><trkseg>
            <trkpt lat="1" lon="1"><time>2024-05-01T08:00:00Z</time></trkpt>
            <trkpt lat="1"><time>2024-05-01T08:00:01Z</time></trkpt>
            <trkpt lat="1" lon="1.001"></trkpt>
            <trkpt lat="x" lon="1.001"><time>2024-05-01T08:00:02Z</time></trkpt>
            <trkpt lat="1" lon="1.002"><time>yesterday</time></trkpt>
            <trkpt lat="1" lon="1.003"><time>2024-05-01T07:00:00Z</time></trkpt>
            <trkpt lat="1" lon="1.004"><time>2024-05-01T08:00:05Z</time></trkpt>
            <trkpt lat="1" lon="1.005"><ele>high</ele><time>2024-05-01T08:00:06Z</time></trkpt>
            <trkpt lat="1" lon="1.006"><ele></ele><time>2024-05-01T08:00:07Z</time></trkpt>
            </trkseg></trk></gpx>
            """
        let path = try write(gpx, to: "bad.gpx", in: dir)
        let (fixes, summary) = try readAll(path)
        // An empty <ele> is no altitude; a word is a bad point, no longer silently no altitude.
        #expect(fixes.count == 3)
        #expect(fixes.last?.altitude == nil)
        #expect(summary.issues.map(\.line) == [4, 5, 6, 7, 8, 10])
        #expect(summary.issues.map(\.message) == [
            "<trkpt> without lat/lon", "<trkpt> without <time>", "<trkpt> with a bad attribute lat=\"x\"",
            // The form expected is told (the text alone did not say what was wrong with it).
            "bad <time> \"yesterday\": expected YYYY-MM-DDThh:mm:ss[.sss][Z|±hh:mm]",
            "time goes backwards (2024-05-01T07:00:00.000Z after 2024-05-01T08:00:00.000Z)",
            "<ele> \"high\" is not a number",
        ])
        let error = #expect(throws: LocationFixtureError.self) {
            _ = try GPXFixReader(path: path, options: .init(policy: .strict)).read { _ in }
        }
        #expect(error?.issue.line == 4)
    }

    @Test func aTimeOnADayThatDoesNotExistIsABadTimeNotTheNextMonth() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1"><trk><trkseg>
            <trkpt lat="1" lon="1"><time>2024-02-28T08:00:00Z</time></trkpt>
            <trkpt lat="1" lon="1.001"><time>2024-02-30T08:00:00Z</time></trkpt>
            <trkpt lat="1" lon="1.002"><time>2024-03-02T08:00:00Z</time></trkpt>
            </trkseg></trk></gpx>
            """
        let (fixes, summary) = try readAll(try write(gpx, to: "feb.gpx", in: dir))
        #expect(fixes.count == 2)
        #expect(summary.issues.map(\.line) == [3])
        #expect(summary.issues.map(\.message) == [
            "bad <time> \"2024-02-30T08:00:00Z\": 2024-02-30 does not exist (February 2024 has 29 days)"
        ])
    }

    @Test func notWellFormedStopsWithTheLineAfterDeliveringWhatCameBefore() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = """
            <gpx version="1.1"><trk><trkseg>
            <trkpt lat="1" lon="1"><time>2024-05-01T08:00:00Z</time></trkpt>
            <trkpt lat="1" lon="1.1"><time>2024-05-01T08:00:01Z</time>
            </trkseg></trk></gpx>
            """
        var seen = 0
        let error = #expect(throws: LocationFixtureError.self) {
            _ = try GPXFixReader(path: try write(gpx, to: "broken.gpx", in: dir)).read { _ in seen += 1 }
        }
        #expect(seen == 1)
        #expect(error?.code == .badInput && error?.issue.line == 4)
        #expect(error?.issue.message.hasPrefix("not well-formed XML") == true)
    }

    @Test func writerOutputReadsBack() throws {
        let dir = try makeTemporaryDirectory()
        let track = sampleTrack(count: 20)
        let text = gpxDocument(track, name: "a & b")
        let (fixes, _) = try readAll(try write(text, to: "rt.gpx", in: dir))
        #expect(fixes.count == 20)
        for (a, b) in zip(track, fixes) {
            #expect(abs(a.latitude - b.latitude) < 1e-9 && abs(a.longitude - b.longitude) < 1e-9)
            #expect(a.time == b.time && a.altitude == b.altitude)
        }
    }
}

@Suite struct GPSDJSONFixReaderTests {
    @Test func readsTPVAndIgnoresOtherClasses() throws {
        let dir = try makeTemporaryDirectory()
        let text = """
            {"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}
            {"class":"TPV","device":"/dev/pts/3","mode":1}
            {"class":"TPV","device":"/dev/pts/3","mode":3,"time":"2024-05-01T08:00:00.000Z","ept":0.005,"lat":48.85,"lon":2.35,"altHAE":80.1,"altMSL":35.0,"epx":3.1,"epy":4.2,"speed":1.5,"track":90.0}
            {"class":"SKY","device":"/dev/pts/3"}
            {"class":"TPV","device":"/dev/pts/3","mode":2,"time":"2024-05-01T08:00:01.000Z","lat":48.8501
            {"class":"TPV","device":"/dev/pts/3","mode":2,"lat":48.8502,"lon":2.3502}
            {"class":"TPV","device":"/dev/pts/3","mode":2,"time":"2024-05-01T08:00:03.000Z","lon":2.3502}
            {"class":"TPV","device":"/dev/pts/3","mode":2,"time":"2024-05-01T08:00:04.000Z","lat":48.8504,"lon":2.3504}
            {"class":"TPV","mode":2,"time":"2024-05-01T08:00:05.000Z","lat":"48.8505","lon":2.3505}
            {"class":"TPV","mode":2,"time":"2024-05-01T08:00:06.000Z","lat":1e999,"lon":2.3506}
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:07.000Z","lat":48.8507,"lon":2.3507,"altMSL":null}
            {"class":"TPV","mode":2,"time":"2023-02-29T08:00:08.000Z","lat":48.8508,"lon":2.3508}
            {"class":"TPV","mode":2,"time":"soon","lat":48.8509,"lon":2.3509}
            {"class":"TPV","mode":"3","time":"2024-05-01T08:00:10.000Z","lat":48.851,"lon":2.351}
            """
        let (fixes, summary) = try readAll(try write(text, to: "log.json", in: dir))
        // A null is no value (the last line: a fix with no altitude).
        #expect(fixes.count == 3)
        #expect(fixes.last?.altitude == nil)
        #expect(fixes[0] == LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_550_400, altitude: 35, speed: 1.5, course: 90, horizontalAccuracy: 4.2))
        // A TPV without time (line 6) is one gpsd writes before it knows the date.
        #expect(summary.ignored == 4)
        // A mode as a string was taken for no fix, in silence (line 14).
        #expect(summary.issues.map(\.line) == [5, 7, 9, 10, 12, 13, 14])
        #expect(summary.issues.map(\.message) == [
            "not a JSON object (truncated line?)", "TPV with mode 2 but without lat/lon",
            "lat is not a number (\"48.8505\")", "a number out of range (larger than a double)",
            "bad time \"2023-02-29T08:00:08.000Z\": 2023-02-29 does not exist (February 2023 has 28 days)",
            "bad time \"soon\": expected YYYY-MM-DDThh:mm:ss[.sss][Z|±hh:mm]", "mode is not a number (\"3\")",
        ])
    }
}

extension GPSDJSONFixReaderTests {
    /// A complete line that is not valid JSON (a leading zero, a plus sign,
    /// NaN) was "not a JSON object (truncated line?)", as a cut one is.
    @Test func aCompleteLineThatIsNotJSONIsNotCalledTruncated() throws {
        let dir = try makeTemporaryDirectory()
        let text = """
            {"class":"TPV","mode":2,"time":"2024-05-01T08:00:00Z","lat":048.1,"lon":2.35}
            {"class":"TPV","mode":2,"time":"2024-05-01T08:00:01Z","lat":+48,"lon":2.35}
            {"class":"TPV","mode":2,"time":"2024-05-01T08:00:02Z","lat":NaN,"lon":2.35}
            [1,2]
            {"class":"TPV","mode":2,"time":"2024-05-01T08:00:03Z","lat":48.1
            """
        let (_, summary) = try readAll(try write(text, to: "invalid.json", in: dir))
        #expect(summary.issues.map(\.message) == [
            "not valid JSON", "not valid JSON", "not valid JSON", "not a JSON object", "not a JSON object (truncated line?)",
        ])
    }

    /// Coordinates out of range are shown as written: (91, 2), not (91.0, 2.0).
    @Test func coordinatesOutOfRangeAreShownAsWritten() throws {
        let dir = try makeTemporaryDirectory()
        let text = """
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:00Z","lat":91,"lon":2}
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:01Z","lat":48.5,"lon":-180.25}
            """
        let (_, summary) = try readAll(try write(text, to: "far.json", in: dir))
        #expect(summary.issues.map(\.message) == ["coordinates out of range (91, 2)", "coordinates out of range (48.5, -180.25)"])
    }

    /// A cut line is called so whatever numbers it holds: one with a
    /// three-digit exponent (1e100, a double) was "a number out of range".
    @Test func aCutLineWithALargeExponentIsCalledTruncated() throws {
        let dir = try makeTemporaryDirectory()
        let text = """
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:00Z","lat":48.1,"lon":2.35,"alt":1e100,"epx":
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:01Z","lat":48.1,"lon":2.35,"alt":1e999}
            """
        let (_, summary) = try readAll(try write(text, to: "cut.json", in: dir))
        #expect(summary.issues.map(\.message) == ["not a JSON object (truncated line?)", "a number out of range (larger than a double)"])
    }

    /// Times are kept to the millisecond, as by the other readers: reports
    /// 0.4 ms apart passed as two fixes, were written with one time, and
    /// their own NMEA then refused the second ("time does not advance").
    @Test func timesAreKeptToTheMillisecond() throws {
        let dir = try makeTemporaryDirectory()
        let text = """
            {"class":"TPV","mode":2,"time":"2024-05-01T07:59:59.9996Z","lat":48.85,"lon":2.35}
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:00.0000Z","lat":48.85,"lon":2.35,"altMSL":35.0}
            {"class":"TPV","mode":2,"time":"2024-05-01T08:00:01.0004Z","lat":48.8501,"lon":2.3501}
            """
        let (fixes, summary) = try readAll(try write(text, to: "subms.json", in: dir))
        #expect(fixes.map(\.time) == [1_714_550_400, 1_714_550_401])
        #expect(fixes.first?.altitude == 35)
        #expect(summary.issues.isEmpty, "\(summary.issues)")
    }

    /// gpsd reports an epoch again as it learns more (RMC first: no
    /// altitude, then GGA's): the later report stands, filled in from the
    /// earlier one, instead of being refused as time standing still.
    @Test func aSecondReportOfAnEpochCompletesTheFirst() throws {
        let dir = try makeTemporaryDirectory()
        let text = """
            {"class":"TPV","mode":2,"time":"2024-05-01T08:00:00.000Z","lat":48.85,"lon":2.35,"speed":1.5,"track":90.0}
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.85,"lon":2.35,"altMSL":35.0}
            not json
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:01.000Z","lat":48.8501,"lon":2.3501,"altMSL":36.0}
            """
        var delivered: [LocationFix] = []
        var options = LocationFixtureReadOptions()
        options.policy = .strict
        // Under the strict policy, the held fix comes out before the bad line stops the read.
        #expect(throws: LocationFixtureError.self) {
            _ = try LocationFixtureReader(path: try write(text, to: "twice.json", in: dir), options: options).read {
                delivered.append($0)
            }
        }
        #expect(delivered == [
            LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_550_400, altitude: 35, speed: 1.5, course: 90)
        ])
        let (fixes, summary) = try readAll(try write(text, to: "twice2.json", in: dir))
        #expect(fixes.map(\.time) == [1_714_550_400, 1_714_550_401])
        #expect(summary.ignored == 1 && summary.issues.map(\.line) == [3])
        // Another receiver's report of the same second is not merged into the first's.
        let two = """
            {"class":"TPV","device":"/dev/ttyA","mode":2,"time":"2024-05-01T08:00:00.000Z","lat":48.85,"lon":2.35}
            {"class":"TPV","device":"/dev/ttyB","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":40.0,"lon":3.0,"altMSL":35.0}
            """
        let (first, twoSummary) = try readAll(try write(two, to: "two.json", in: dir))
        #expect(first == [LocationFix(latitude: 48.85, longitude: 2.35, time: 1_714_550_400)])
        #expect(twoSummary.issues.map(\.line) == [2])
    }

    /// Two receivers in one log were read as one track: each of the second
    /// device's fixes of the same second was a bad line, "does not advance".
    @Test func aFixtureIsTheFirstDevicesTrack() throws {
        let dir = try makeTemporaryDirectory()
        let text = """
            {"class":"TPV","mode":2,"time":"2024-05-01T07:59:59.000Z","lat":48.8499,"lon":2.3499}
            {"class":"TPV","device":"/dev/ttyA","mode":2,"time":"2024-05-01T08:00:00.000Z","lat":48.85,"lon":2.35}
            {"class":"TPV","device":"/dev/ttyB\\u001b[2J","mode":2,"time":"2024-05-01T08:00:00.000Z","lat":40.0,"lon":3.0}
            {"class":"TPV","device":"/dev/ttyA","mode":2,"time":"2024-05-01T08:00:01.000Z","lat":48.8501,"lon":2.3501}
            {"class":"TPV","device":"/dev/ttyB\\u001b[2J","mode":2,"time":"2024-05-01T08:00:01.000Z","lat":40.0001,"lon":3.0001}
            {"class":"TPV","device":"/dev/ttyC","mode":2,"time":"2024-05-01T08:00:01.500Z","lat":10,"lon":10}
            {"class":"TPV","mode":2,"time":"2024-05-01T08:00:02.000Z","lat":48.8502,"lon":2.3502}
            """
        let (fixes, summary) = try readAll(try write(text, to: "two.json", in: dir))
        #expect(fixes.map(\.latitude) == [48.8499, 48.85, 48.8501, 48.8502])
        #expect(summary.issues.map(\.line) == [3, 6])
        #expect(summary.issues.first?.message == #"a fix from device "/dev/ttyB\x1B[2J", not the track's "/dev/ttyA": "#
            + "a fixture is one device's track, so this device's fixes are skipped (told once)")
        #expect(summary.skipped == 2 && summary.ignored == 1)
        // A refused first fix does not choose the track; another device's
        // report without a time is ignored, as any is.
        let refused = """
            {"class":"TPV","device":"/dev/ttyA","mode":2,"time":"2024-05-01T08:00:00.000Z","lat":95,"lon":2.35}
            {"class":"TPV","device":"/dev/ttyB","mode":2,"time":"2024-05-01T08:00:01.000Z","lat":40.0,"lon":3.0}
            {"class":"TPV","device":"/dev/ttyA","mode":2,"lat":48.85,"lon":2.35}
            {"class":"TPV","device":"/dev/ttyA","mode":2,"time":"2024-05-01T08:00:02.000Z","lat":48.85,"lon":2.35}
            """
        let (bFixes, bSummary) = try readAll(try write(refused, to: "refused.json", in: dir))
        #expect(bFixes.map(\.latitude) == [40.0])
        #expect(bSummary.issues.map(\.line) == [1, 4] && bSummary.ignored == 1)
        // Another device's report inside the track's epoch leaves it whole
        // (it was delivered half, and its second report refused), and a
        // null mode is no fix, as any null is no value.
        let inside = """
            {"class":"TPV","device":"/dev/ttyA","mode":2,"time":"2024-05-01T08:00:00.000Z","lat":48.85,"lon":2.35}
            {"class":"TPV","device":"/dev/ttyB","mode":2,"time":"2024-05-01T08:00:00.000Z","lat":40.0,"lon":3.0}
            {"class":"TPV","device":"/dev/ttyA","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.85,"lon":2.35,"altMSL":35}
            {"class":"TPV","device":"/dev/ttyA","mode":null,"time":"2024-05-01T08:00:00.500Z","lat":1,"lon":1}
            {"class":"TPV","device":"/dev/ttyA","mode":2,"time":"2024-05-01T08:00:01.000Z","lat":48.8501,"lon":2.3501}
            """
        let (whole, wholeSummary) = try readAll(try write(inside, to: "inside.json", in: dir))
        #expect(whole.map(\.altitude) == [35, nil] && whole.map(\.latitude) == [48.85, 48.8501])
        #expect(wholeSummary.issues.map(\.line) == [2] && wholeSummary.ignored == 2)
    }
}

@Suite struct ImplausibleFixTests {
    /// Written to NMEA, a NaN or 1e300 m altitude trapped the converter and the feeder.
    @Test func impossibleValuesAreSkippedWithTheirLineAndConvertNothingBad() throws {
        let dir = try makeTemporaryDirectory()
        let text = """
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:00.000Z","lat":48.85,"lon":2.35,"altMSL":1e300}
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:01.000Z","lat":48.85,"lon":2.35,"speed":-1}
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:02.000Z","lat":48.85,"lon":2.35,"track":720}
            {"class":"TPV","mode":3,"time":"2024-05-01T08:00:03.000Z","lat":48.85,"lon":2.35,"altMSL":35,"speed":1.5,"track":90}
            """
        let input = try write(text, to: "odd.json", in: dir)
        let (fixes, summary) = try readAll(input)
        #expect(fixes.count == 1 && fixes.first?.altitude == 35)
        #expect(summary.issues.map(\.line) == [1, 2, 3])
        #expect(summary.issues.map(\.message) == [
            "altitude out of range (1e+300; -20000 to 1000000)", "speed out of range (-1; 0 to 100000)",
            "course out of range (720; 0 to 360)",
        ])
        let output = dir.appendingPathComponent("odd.nmea").path
        #expect(try LocationFixtureConverter.convert(input: input, output: output).fixes == 1)
        #expect(LocationFix(latitude: 0, longitude: 0, time: 0, altitude: .nan).implausibility != nil)
    }

    @Test func aOneCharacterOutputNameHasItsPartialFileBesideIt() {
        let pid = getpid()
        #expect(partialPath(for: "a") == "./.a.\(pid).partial")
        #expect(partialPath(for: "-") == "./.-.\(pid).partial")
        #expect(partialPath(for: "/x") == "/.x.\(pid).partial")
        #expect(partialPath(for: "d/out.nmea") == "d/.out.nmea.\(pid).partial")
    }
}

@Suite struct LocationFixtureConverterTests {
    @Test func convertsAroundAllFormatsWithoutLoss() throws {
        let dir = try makeTemporaryDirectory()
        let track = sampleTrack(count: 100)
        let gpx = try write(gpxDocument(track, name: "t"), to: "a.gpx", in: dir)
        let nmeaPath = dir.appendingPathComponent("b.nmea").path
        let jsonPath = dir.appendingPathComponent("c.json").path
        let back = dir.appendingPathComponent("d.gpx").path
        #expect(try LocationFixtureConverter.convert(input: gpx, output: nmeaPath).fixes == 100)
        #expect(try LocationFixtureConverter.convert(input: nmeaPath, output: jsonPath).fixes == 100)
        #expect(try LocationFixtureConverter.convert(input: jsonPath, output: back).fixes == 100)
        let (fixes, _) = try readAll(back)
        #expect(fixes.count == track.count)
        for (a, b) in zip(track, fixes) {
            #expect(abs(a.latitude - b.latitude) < 1e-8 && abs(a.longitude - b.longitude) < 1e-8)
            #expect(a.time == b.time && a.altitude == b.altitude)
        }
    }

    @Test func convertingAFileOntoItselfIsRefusedAndLeavesItAlone() throws {
        let dir = try makeTemporaryDirectory()
        let text = gpxDocument(sampleTrack(count: 10), name: "t")
        let gpx = try write(text, to: "a.gpx", in: dir)
        let error = #expect(throws: LocationFixtureError.self) {
            try LocationFixtureConverter.convert(input: gpx, output: dir.path + "/./a.gpx")
        }
        #expect(error?.code == .unwritable)
        #expect(error?.description == dir.path + "/./a.gpx: this is the input file too; write the conversion to another file")
        #expect(try String(contentsOfFile: gpx, encoding: .utf8) == text)
    }

    @Test func aFailedConversionLeavesTheOldOutputAndNoPartialFile() throws {
        let dir = try makeTemporaryDirectory()
        let junk = try write("junk\n", to: "junk.nmea", in: dir)
        let output = try write("old", to: "out.gpx", in: dir)
        let error = #expect(throws: LocationFixtureError.self) { try LocationFixtureConverter.convert(input: junk, output: output) }
        #expect(error?.code == .noFixes)
        #expect(error?.description.contains("junk.nmea:1: not an NMEA sentence") == true, "\(String(describing: error))")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["junk.nmea", "out.gpx"])
    }

    @Test func aLinkedOutputIsWrittenThroughAndADeviceDirectlyAndAFileKeepsItsMode() throws {
        let dir = try makeTemporaryDirectory()
        let gpx = try write(
            gpxDocument(sampleTrack(count: 5), name: "t"),
            to: "a.gpx", in: dir)
        let real = try write("old", to: "real.nmea", in: dir)
        chmod(real, 0o640)
        let link = dir.appendingPathComponent("link.nmea").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        #expect(try LocationFixtureConverter.convert(input: gpx, output: link).fixes == 5)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == real)
        #expect(try String(contentsOfFile: real, encoding: .utf8).hasPrefix("$GPRMC"))
        #expect((try FileManager.default.attributesOfItem(atPath: real)[.posixPermissions] as? Int) == 0o640)
        // Converted onto the file itself (no link): replaced, with its mode.
        #expect(try LocationFixtureConverter.convert(input: gpx, output: real, outputFormat: .gpsdJSON).fixes == 5)
        #expect(try String(contentsOfFile: real, encoding: .utf8).hasPrefix("{"))
        #expect((try FileManager.default.attributesOfItem(atPath: real)[.posixPermissions] as? Int) == 0o640)
        // A character device is written to, not replaced (nor a file made beside it in /dev).
        #expect(try LocationFixtureConverter.convert(input: gpx, output: "/dev/null", outputFormat: .nmea).fixes == 5)
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
    }

    @Test func detectsFormatsByContentWhenTheNameDoesNotSay() throws {
        let dir = try makeTemporaryDirectory()
        #expect(try LocationFixtureFormat.detect(path: write("  \n<gpx/>", to: "a.dat", in: dir)) == .gpx)
        #expect(try LocationFixtureFormat.detect(path: write("$GPGGA", to: "b.dat", in: dir)) == .nmea)
        #expect(try LocationFixtureFormat.detect(path: write("{}", to: "c.dat", in: dir)) == .gpsdJSON)
        #expect(throws: LocationFixtureError.self) { try LocationFixtureFormat.detect(path: write("hi", to: "d.dat", in: dir)) }
        #expect(throws: LocationFixtureError.self) { try LocationFixtureFormat.detect(path: dir.appendingPathComponent("none").path) }
    }
}
