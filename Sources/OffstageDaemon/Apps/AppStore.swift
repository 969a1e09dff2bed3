import Foundation
import GRDB
import OffstageCore

/// An installed app as the store keeps it.
public struct InstalledApp: Sendable, Equatable {
    public var bundle: AppBundle
    /// Per-app settings (developer overrides), as JSON.
    public var settings: JSONValue
    public var installedAt: Double
}

/// An app process as the store records it while it lives.
public struct RecordedProcess: Sendable, Equatable {
    public var bundleID: String
    public var pid: Int32
    /// Its start time in clock ticks since boot (`/proc/PID/stat` field 22).
    public var startTicks: UInt64
    /// The boot it runs in (`/proc/sys/kernel/random/boot_id`); nil in the
    /// record of an older daemon.
    public var bootID: String?
    /// Its launch's `OFFSTAGE_TOKEN`; nil in the record of an older daemon.
    public var token: String?

    public init(bundleID: String, pid: Int32, startTicks: UInt64, bootID: String?, token: String?) {
        self.bundleID = bundleID
        self.pid = pid
        self.startTicks = startTicks
        self.bootID = bootID
        self.token = token
    }
}

/// The daemon's persistent store (SQLite through GRDB, in the data directory):
/// installed apps with their settings, and the app processes alive, so a
/// restarted daemon loses no app and leaves no orphan behind.
public final class AppStore: Sendable {
    let database: DatabaseQueue

    /// Opens (creating and migrating) the store at `path`.
    /// - Throws: ``DaemonError`` with code `.storage`.
    public init(path: String) throws {
        // SQLite takes an empty file for a new database: a store cut to
        // nothing (a full disk, a stray `: >`) forgot every app in silence.
        if path != ":memory:", FileKind(atPath: path) == .regular, fileSize(atPath: path) == 0 {
            throw DaemonError(
                .storage, "the store \(path) is empty (cut short?): opened, it would forget every installed app; move it away to start afresh")
        }
        do {
            var configuration = Configuration()
            // WAL with synchronous=NORMAL: durable across a daemon crash, and no
            // fsync per write on the event loop (a spawn records its process).
            configuration.prepareDatabase { db in
                if db.configuration.readonly == false {
                    _ = try? String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                    try db.execute(sql: "PRAGMA synchronous = NORMAL")
                }
            }
            database = try DatabaseQueue(path: path, configuration: configuration)
            try Self.migrator.migrate(database)
        } catch {
            throw DaemonError(.storage, "cannot open the store at \(path): \(Self.describe(error))")
        }
    }

    /// An error in one line: GRDB's description of a failed statement
    /// carries the whole SQL, over several lines.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        return "SQLite error \(error.resultCode.rawValue): \(error.message ?? "\(error.resultCode)")"
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "app") { t in
                t.primaryKey("bundleID", .text)
                t.column("name", .text).notNull()
                t.column("directory", .text).notNull()
                t.column("plistPath", .text).notNull()
                t.column("executable", .text).notNull()
                t.column("backgroundModes", .text).notNull()
                t.column("exitsOnSuspend", .boolean).notNull()
                t.column("newsstandApp", .boolean).notNull()
                t.column("settings", .text).notNull().defaults(to: "{}")
                t.column("installedAt", .double).notNull()
            }
            try db.create(table: "process") { t in
                t.primaryKey("bundleID", .text)
                t.column("pid", .integer).notNull()
                t.column("startTicks", .integer).notNull()
            }
        }
        migrator.registerMigration("v2") { db in
            // What the event log's seq has reached: a log moved away or
            // removed does not make a restarted daemon hand seqs out again.
            try db.create(table: "meta") { t in
                t.primaryKey("key", .text)
                t.column("value", .integer).notNull()
            }
        }
        migrator.registerMigration("v3") { db in
            // Which boot a process ran in, and its launch's token: the
            // processes it started, left in its group, carry the token.
            // Null in the records of an older daemon.
            try db.alter(table: "process") { t in
                t.add(column: "bootID", .text)
                t.add(column: "token", .text)
            }
        }
        return migrator
    }

    /// The highest event `seq` recorded (0 when none).
    public func lastSeq() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'lastSeq'") ?? 0 }
    }

    /// Records the event `seq` reached.
    public func recordLastSeq(_ seq: Int) throws {
        try write { db in try Self.recordLastSeq(seq, in: db) }
    }

    private static func recordLastSeq(_ seq: Int, in db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('lastSeq', ?)", arguments: [seq])
    }

    /// Inserts or replaces an app, keeping its settings when it was installed before.
    public func save(_ bundle: AppBundle, installedAt: Double) throws {
        let d = bundle.descriptor
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO app (bundleID, name, directory, plistPath, executable, backgroundModes, exitsOnSuspend,
                                     newsstandApp, installedAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(bundleID) DO UPDATE SET name = excluded.name, directory = excluded.directory,
                        plistPath = excluded.plistPath, executable = excluded.executable,
                        backgroundModes = excluded.backgroundModes, exitsOnSuspend = excluded.exitsOnSuspend,
                        newsstandApp = excluded.newsstandApp
                    """,
                arguments: [
                    d.bundleID, bundle.name, bundle.directory, bundle.plistPath, bundle.executable,
                    d.backgroundModes.map(\.rawValue).sorted().joined(separator: ","), d.exitsOnSuspend, d.isNewsstandApp,
                    installedAt,
                ])
        }
    }

    public func remove(_ bundleID: String) throws {
        try write { db in try db.execute(sql: "DELETE FROM app WHERE bundleID = ?", arguments: [bundleID]) }
    }

    /// Replaces an app's settings.
    public func setSettings(_ settings: JSONValue, for bundleID: String) throws {
        try write { db in
            try db.execute(sql: "UPDATE app SET settings = ? WHERE bundleID = ?", arguments: [settings.jsonText, bundleID])
        }
    }

    /// Every installed app, in install order.
    public func apps() throws -> [InstalledApp] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM app ORDER BY installedAt, bundleID").map { row in
                let modes = (row["backgroundModes"] as String).split(separator: ",").compactMap {
                    BackgroundMode(rawValue: String($0))
                }
                let descriptor = AppDescriptor(
                    bundleID: row["bundleID"], backgroundModes: Set(modes), exitsOnSuspend: row["exitsOnSuspend"],
                    isNewsstandApp: row["newsstandApp"])
                let bundle = AppBundle(
                    descriptor: descriptor, name: row["name"], directory: row["directory"], plistPath: row["plistPath"],
                    executable: row["executable"])
                let settings = (try? JSONValue(parsing: row["settings"] as String)) ?? .emptyObject
                return InstalledApp(bundle: bundle, settings: settings, installedAt: row["installedAt"])
            }
        }
    }

    /// Records a live app process (pid plus its start time, so a reused pid
    /// is never mistaken for it; the boot it runs in, as start times count
    /// from the boot; its launch's token, which the processes it starts
    /// inherit) and, in the same transaction, the event `seq` reached when
    /// given.
    public func recordProcess(_ process: RecordedProcess, lastSeq: Int? = nil) throws {
        try write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO process (bundleID, pid, startTicks, bootID, token) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    process.bundleID, Int(process.pid), Int64(bitPattern: process.startTicks), process.bootID, process.token,
                ])
            if let lastSeq { try Self.recordLastSeq(lastSeq, in: db) }
        }
    }

    public func forgetProcess(_ bundleID: String) throws {
        try write { db in try db.execute(sql: "DELETE FROM process WHERE bundleID = ?", arguments: [bundleID]) }
    }

    /// Processes recorded as alive (left over if the daemon died).
    public func recordedProcesses() throws -> [RecordedProcess] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM process").map {
                RecordedProcess(
                    bundleID: $0["bundleID"], pid: Int32($0["pid"] as Int), startTicks: UInt64(bitPattern: $0["startTicks"] as Int64),
                    bootID: $0["bootID"], token: $0["token"])
            }
        }
    }

    private func write(_ body: (Database) throws -> Void) throws {
        do { try database.write(body) } catch { throw DaemonError(.storage, "store write failed: \(Self.describe(error))") }
    }

    private func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try database.read(body) } catch { throw DaemonError(.storage, "store read failed: \(Self.describe(error))") }
    }
}
