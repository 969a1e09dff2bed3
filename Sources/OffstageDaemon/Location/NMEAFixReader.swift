import OffstageCore

/// Reads fixes from an NMEA 0183 log: `GGA` and `RMC` from any talker,
/// checksums verified, one fix per epoch (sentences with the same time of
/// day are merged; a second of one type from the same talker starts the next). `RMC` gives the date; a `GGA` with no date known yet
/// uses ``LocationFixtureReadOptions/assumedNMEADate`` or is reported.
/// Other sentence types and sentences without a fix (`RMC` status `V`,
/// `GGA` quality 0) are ignored, not errors.
public struct NMEAFixReader: Sendable {
    /// The file's path.
    public let path: String
    /// Options, including the bad-input policy.
    public let options: LocationFixtureReadOptions

    public init(path: String, options: LocationFixtureReadOptions = .init()) {
        self.path = path
        self.options = options
    }

    private struct Epoch {
        var line: Int
        var timeOfDay: Double
        var days: Int?
        var latitude: Double
        var longitude: Double
        var altitude: Double?
        var speed: Double?
        var course: Double?
        var accuracy: Double?
        /// The talkers whose `GGA` and `RMC` the epoch has: a second of one
        /// type from the same talker starts a new epoch, whatever its time
        /// (fixes a day apart at the same time of day, GGA then RMC each,
        /// were merged into one another); from another talker it is the
        /// same fix (`$GPGGA` and `$GNGGA` of one epoch).
        var ggaTalkers: [Substring] = []
        var rmcTalkers: [Substring] = []
        /// The first of the epoch's sentences with a value out of range
        /// (its line and what is wrong): the epoch is bad input there.
        var problem: (line: Int, message: String)?
    }

    /// Streams the file's fixes to `body`, in order.
    /// - Throws: ``LocationFixtureError`` (unreadable file, or bad input
    ///   under the strict policy), or what `body` throws.
    public func read(_ body: (LocationFix) throws -> Void) throws -> LocationReadSummary {
        var lines = try LocationLineReader(path: path)
        var checker = LocationFixChecker(file: path, format: .nmea, options: options)
        var pending: Epoch?
        var lastDays: Int? = options.assumedNMEADate.map { Int(($0 / 86_400).rounded(.down)) }
        var lastTimeOfDay: Double?
        // The issues of lines read while an epoch is pending wait for the
        // epoch's own, which is known only once the epoch is complete but
        // names an earlier line: issues come in file order, and the strict
        // policy stops at the first bad line. Past what a summary keeps,
        // they are only counted (the read streams, whatever the file).
        var held: [(line: Int, message: String)] = []
        var heldOnlyCounted = 0

        /// Reports a bad line, after the pending epoch's issue if it has one.
        func report(line: Int, _ message: String) throws {
            if pending == nil {
                try checker.issue(line: line, message)
            } else if held.count < max(1, options.maximumIssuesKept) {
                held.append((line, message))
            } else {
                heldOnlyCounted += 1
            }
        }

        func flush(_ epoch: Epoch) throws {
            var later = held[...]
            held.removeAll()
            /// Reports the held issues of the lines before `line`.
            func reportHeld(before line: Int = .max) throws {
                while let first = later.first, first.line < line {
                    later.removeFirst()
                    try checker.issue(line: first.line, first.message)
                }
                if later.isEmpty {
                    checker.skip(heldOnlyCounted)
                    heldOnlyCounted = 0
                }
            }
            var days = epoch.days
            if days == nil, let known = lastDays {
                // GGA only: carry the last date, rolling over at midnight: a
                // time more than 12 h before the last one (23:59:59, then
                // 00:00:01). A time a little earlier is a time going
                // backwards, on the same day, for the checks to report.
                let wrapped = lastTimeOfDay.map { epoch.timeOfDay < $0 - 43_200 } ?? false
                days = wrapped ? known + 1 : known
            }
            guard let days else {
                // A bad line read before the epoch ended may have been its
                // RMC: the strict policy stops there, at the likely cause.
                if options.policy == .strict { try reportHeld() }
                try checker.issue(line: epoch.line, "time of day without a date (no RMC sentence before it; --nmea-date YYYY-MM-DD gives one)")
                return try reportHeld()
            }
            if epoch.days != nil {
                // An RMC's own date counts even when its epoch is refused (a
                // bad value): the date itself is not in doubt.
                lastDays = days
                lastTimeOfDay = epoch.timeOfDay
            }
            if let problem = epoch.problem {
                try reportHeld(before: problem.line)
                try checker.issue(line: problem.line, problem.message)
                return try reportHeld()
            }
            let fix = LocationFix(
                latitude: epoch.latitude, longitude: epoch.longitude,
                // To the millisecond, as the other readers and the writer keep times.
                time: LocationTimeFormat.toMillisecond(Double(days) * 86_400 + epoch.timeOfDay),
                altitude: epoch.altitude, speed: epoch.speed, course: epoch.course,
                horizontalAccuracy: epoch.accuracy)
            // The checks of the whole epoch name its first line, before any held one.
            let accepted = try checker.accept(fix, line: epoch.line)
            if accepted != nil {
                // A GGA-only epoch carries the date on only when kept: a
                // stray one (refused) moves neither date nor time.
                lastDays = days
                lastTimeOfDay = epoch.timeOfDay
            }
            // Under the strict policy a held issue ends the read here, before
            // the epoch (complete only after that bad line) is delivered.
            try reportHeld()
            if let accepted { try body(accepted) }
        }

        while let line = try lines.next(readBefore: checker.summary) {
            let number = lines.lineNumber
            if line.isEmpty { continue }  // the reader trims trailing blanks
            let sentence: NMEASentence
            do {
                sentence = try NMEASentence(line: line)
            } catch {
                switch error {
                case .notASentence: try report(line: number, "not an NMEA sentence")
                case .missingChecksum: try report(line: number, "missing checksum (truncated line?)")
                case .badChecksum(let expected, let found):
                    try report(line: number, "bad checksum \(found), expected \(expected)")
                case .textAfterChecksum(let text):
                    try report(line: number, "text after the checksum: \"\(text.prefix(40))\"")
                }
                continue
            }
            guard sentence.type == "GGA" || sentence.type == "RMC" else {
                checker.ignore()
                continue
            }
            // Before the time: a receiver without a fix (cold start: RMC
            // status V, GGA quality 0) often sends no time either, and such
            // lines, our own primer among them, were bad lines.
            let isRMC = sentence.type == "RMC"
            let hasFix = isRMC ? sentence[1] == "A" : !(sentence[5].isEmpty || sentence[5] == "0")
            guard hasFix else {
                checker.ignore()
                continue
            }
            // The field as written and the form expected are told (the
            // messages said only "without a valid time").
            guard let tod = NMEASentence.timeOfDay(sentence[0]) else {
                try report(line: number, "\(sentence.type) without a valid time (\"\(sentence[0])\"; expected hhmmss.sss)")
                continue
            }
            let (latIndex, lonIndex) = isRMC ? (2, 4) : (1, 3)
            guard let lat = NMEASentence.angle(sentence[latIndex], sentence[latIndex + 1], degreeDigits: 2) else {
                try report(line: number, "\(sentence.type) without valid coordinates (\"\(sentence[latIndex]),\(sentence[latIndex + 1])\"; expected ddmm.mmmm,N or S)")
                continue
            }
            guard let lon = NMEASentence.angle(sentence[lonIndex], sentence[lonIndex + 1], degreeDigits: 3) else {
                try report(line: number, "\(sentence.type) without valid coordinates (\"\(sentence[lonIndex]),\(sentence[lonIndex + 1])\"; expected dddmm.mmmm,E or W)")
                continue
            }
            var days: Int?
            if isRMC {
                guard let date = NMEASentence.date(sentence[8]) else {
                    try report(line: number, "RMC without a valid date (\"\(sentence[8])\"; expected ddmmyy)")
                    continue
                }
                if let why = LocationTimeFormat.nonexistence(year: date.year, month: date.month, day: date.day) {
                    try report(line: number, "RMC date \(sentence[8]) does not exist (\(why))")
                    continue
                }
                days = LocationTimeFormat.daysFromCivil(year: date.year, month: date.month, day: date.day)
            }
            // Optional values, each parsed once: empty when unknown, else a
            // decimal number (anything else is bad input at this line).
            let (first, second) = isRMC ? ((6, "speed"), (7, "course")) : ((7, "HDOP"), (8, "altitude"))
            let firstValue = sentence[first.0].isEmpty ? nil : DecimalText.decimal(sentence[first.0])
            let secondValue = sentence[second.0].isEmpty ? nil : DecimalText.decimal(sentence[second.0])
            let notANumber =
                firstValue == nil && !sentence[first.0].isEmpty ? first
                : secondValue == nil && !sentence[second.0].isEmpty ? second : nil
            if let (index, name) = notANumber {
                try report(line: number, "\(sentence.type) \(name) \"\(sentence[index])\" is not a number")
                continue
            }
            if let p = pending,
                p.timeOfDay != tod || (days != nil && p.days != nil && p.days != days)
                    || (isRMC ? p.rmcTalkers : p.ggaTalkers).contains(sentence.talker)
            {
                try flush(p)
                pending = nil
            }
            var epoch = pending ?? Epoch(line: number, timeOfDay: tod, latitude: lat, longitude: lon)
            // This sentence's values, checked here so that a bad one is
            // blamed on this line, not on the epoch's first.
            var values = LocationFix(latitude: lat, longitude: lon, time: 0)
            if isRMC {
                epoch.days = days
                epoch.rmcTalkers.append(sentence.talker)
                values.speed = firstValue.map { $0 * 1852 / 3600 }
                values.course = secondValue
            } else {
                epoch.ggaTalkers.append(sentence.talker)
                values.horizontalAccuracy = firstValue.map { $0 * NMEAFixWriter.metresPerHDOP }
                values.altitude = secondValue
            }
            if epoch.problem == nil {
                if !values.coordinate.isValid {
                    epoch.problem = (number, "coordinates out of range (\(lat), \(lon))")
                } else if let speed = values.speed, !LocationFix.speedRange.contains(speed) {
                    // As written, in knots: in m/s, -5 was -2.5722222222222224.
                    let most = NMEAFixWriter.decimal(LocationFix.speedRange.upperBound * 3600 / 1852, 1)
                    epoch.problem = (number, "speed out of range (\(sentence[6]) knots; 0 to \(most) knots)")
                } else if let accuracy = values.horizontalAccuracy, !LocationFix.horizontalAccuracyRange.contains(accuracy) {
                    // As written, an HDOP: in metres, -1 was -5.0.
                    let most = NMEAFixWriter.decimal(LocationFix.horizontalAccuracyRange.upperBound / NMEAFixWriter.metresPerHDOP, 0)
                    epoch.problem = (number, "HDOP out of range (\(sentence[7]); 0 to \(most))")
                } else if let problem = values.implausibility {
                    epoch.problem = (number, problem)
                }
            }
            epoch.latitude = lat
            epoch.longitude = lon
            if let speed = values.speed { epoch.speed = speed }
            if let course = values.course { epoch.course = course }
            if let altitude = values.altitude { epoch.altitude = altitude }
            if let accuracy = values.horizontalAccuracy { epoch.accuracy = accuracy }
            pending = epoch
        }
        if let p = pending { try flush(p) }
        return checker.summary
    }
}
