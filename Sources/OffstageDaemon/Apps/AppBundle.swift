import Foundation
import OffstageCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// An app to install: its `Info.plist`, read with `PropertyListSerialization`
/// (XML or binary), and its executable.
public struct AppBundle: Sendable, Equatable {
    public var descriptor: AppDescriptor
    /// Display name (`CFBundleDisplayName`, `CFBundleName`, or the executable's name).
    public var name: String
    /// Directory holding the `Info.plist`.
    public var directory: String
    public var plistPath: String
    public var executable: String

    /// Reads an app from a directory holding `Info.plist`, or from a plist file.
    ///
    /// `CFBundleExecutable` is looked up relative to the app directory, then in
    /// each of `searchPaths` (the directory of the `offstage` binary, where
    /// SwiftPM puts the sample apps); `executable` overrides it.
    /// - Throws: ``DaemonError`` naming the file and what is wrong with it.
    public static func load(path: String, executable: String? = nil, searchPaths: [String] = []) throws -> AppBundle {
        var isDirectory: ObjCBool = false
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) else {
            throw DaemonError(.badPlist, "\(path): no such file or directory")
        }
        let plistPath = isDirectory.boolValue ? absolute + "/Info.plist" : absolute
        let directory = isDirectory.boolValue ? absolute : parentPath(of: absolute)
        guard let data = FileManager.default.contents(atPath: plistPath) else {
            throw DaemonError(.badPlist, "\(plistPath): no Info.plist here")
        }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            // Foundation says only "the data is not in the correct format"; for
            // an XML plist, an XML parser can at least say where it breaks.
            if data.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) == UInt8(ascii: "<") {
                let parser = XMLParser(data: data)
                if !parser.parse() {
                    throw DaemonError(
                        .badPlist, "\(plistPath):\(parser.lineNumber): not a property list: not well-formed XML (at column \(parser.columnNumber))")
                }
            }
            throw DaemonError(.badPlist, "\(plistPath): not a property list (XML or binary)")
        }
        guard let info = plist as? [String: Any] else {
            throw DaemonError(.badPlist, "\(plistPath): the top level must be a dictionary")
        }
        func string(_ key: String, required: Bool) throws -> String? {
            guard let value = info[key] else {
                if required { throw DaemonError(.badPlist, "\(plistPath): missing required key \(key)") }
                return nil
            }
            guard let text = value as? String, !text.isEmpty else {
                throw DaemonError(.badPlist, "\(plistPath): \(key) must be a non-empty string")
            }
            return text
        }
        func bool(_ key: String) throws -> Bool {
            guard let value = info[key] else { return false }
            guard let flag = value as? Bool else { throw DaemonError(.badPlist, "\(plistPath): \(key) must be a Boolean") }
            return flag
        }
        let bundleID = try string("CFBundleIdentifier", required: true)!
        if let problem = Self.bundleIDProblem(bundleID) {
            throw DaemonError(.badPlist, "\(plistPath): CFBundleIdentifier \"\(bundleID)\" \(problem)")
        }
        var modes: Set<BackgroundMode> = []
        if let raw = info["UIBackgroundModes"] {
            guard let list = raw as? [Any] else {
                throw DaemonError(.badPlist, "\(plistPath): UIBackgroundModes must be an array of strings")
            }
            for item in list {
                guard let name = item as? String, let mode = BackgroundMode(rawValue: name) else {
                    let known = BackgroundMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw DaemonError(.badPlist, "\(plistPath): unknown UIBackgroundModes entry \(item) (known: \(known))")
                }
                modes.insert(mode)
            }
        }
        let newsstand = try bool("UINewsstandApp")
        if modes.contains(.newsstandContent), !newsstand {
            throw DaemonError(.badPlist, "\(plistPath): the newsstand-content mode requires UINewsstandApp = true")
        }
        let exitsOnSuspend = try bool("UIApplicationExitsOnSuspend")

        let executableName = try executable ?? string("CFBundleExecutable", required: true)!
        let resolved = try resolveExecutable(
            executableName, appDirectory: directory, searchPaths: searchPaths, namedBy: executable == nil ? plistPath : "--executable")
        let name = try string("CFBundleDisplayName", required: false) ?? string("CFBundleName", required: false)
            ?? (resolved as NSString).lastPathComponent
        return AppBundle(
            descriptor: AppDescriptor(
                bundleID: bundleID, backgroundModes: modes, exitsOnSuspend: exitsOnSuspend, isNewsstandApp: newsstand),
            name: name, directory: directory, plistPath: plistPath, executable: resolved)
    }

    /// The longest bundle id: well within a file name's 255 bytes.
    public static let maximumBundleIDLength = 200

    /// Why `id` cannot be a bundle id, if it cannot: it may hold only ASCII
    /// letters, digits, `.`, `-` and `_`, up to ``maximumBundleIDLength``,
    /// with no empty part (the id names the app's container and log: "."
    /// or ".." would be a directory above them).
    public static func bundleIDProblem(_ id: String) -> String? {
        // ASCII, as on iOS: two ids Unicode takes for one (an "é" composed
        // or not) were one app to the daemon and two to the store and the
        // file system, and an uninstall left the other behind.
        guard id.utf8.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }) else {
            return "may hold only ASCII letters and digits, '.', '-' and '_'"
        }
        // It names the container and the log (ID.log), which a file system
        // holds to 255 bytes: at 252 an install passed and every launch failed.
        guard id.utf8.count <= maximumBundleIDLength else {
            return "is longer than \(maximumBundleIDLength) characters (it names the app's container and log file)"
        }
        guard !id.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            return "has an empty part (it starts or ends with '.' or has '..')"
        }
        return nil
    }

    /// The executable's absolute path: `name` itself when absolute, else
    /// the first regular file of that name in the app's directory or the
    /// search paths (a directory of that name is passed over, and named in
    /// the error when no file is found).
    /// - Parameter namedBy: where the name comes from (the plist's path, or
    ///   `--executable`), for the error.
    static func resolveExecutable(_ name: String, appDirectory: String, searchPaths: [String], namedBy: String) throws
        -> String
    {
        let places = name.hasPrefix("/") ? [""] : [appDirectory] + searchPaths
        // The first directory of that name, and where it was.
        var directory: (path: String, place: Int)?
        for (place, base) in places.enumerated() {
            let path = URL(fileURLWithPath: name.hasPrefix("/") ? name : base + "/" + name).standardizedFileURL.path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                // A directory of that name beside the plist may be anything; named outright it is a mistake.
                guard name.hasPrefix("/") else {
                    directory = directory ?? (path, place)
                    continue
                }
                throw DaemonError(.badExecutable, "\(namedBy): \(path) is a directory, not an executable")
            }
            guard access(path, X_OK) == 0 else {
                throw DaemonError(.badExecutable, "\(path): the executable is not executable (chmod +x it)")
            }
            return path
        }
        // No file of that name anywhere: a directory of it was "not found".
        if let directory {
            let others = places.enumerated().filter { $0.offset != directory.place }.map(\.element)
            let elsewhere = others.isEmpty ? "" : ", and no file \(name) is in the other places looked in (\(others.joined(separator: ", ")))"
            throw DaemonError(.badExecutable, "\(namedBy): \(directory.path) is a directory, not an executable\(elsewhere)")
        }
        let looked = name.hasPrefix("/") ? "" : " (looked in \(places.joined(separator: ", ")))"
        throw DaemonError(.badExecutable, "\(namedBy): executable \(name) not found\(looked)")
    }
}
