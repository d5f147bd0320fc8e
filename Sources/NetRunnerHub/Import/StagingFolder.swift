import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A hidden folder of the models folder an import works in, removed with everything in it
/// when the last reference goes.
///
/// Its name says whose it is, `.netrunner-import-<host>-<pid>-XXXXXX`, so that one left by a
/// process that was killed is found and removed at the next start
/// (``ModelImporter/removeAbandonedStagingFolders()``), while the imports of processes still
/// running, on this machine or another sharing the folder, are left alone.
final class StagingFolder: Sendable {
    let path: String

    init(path: String) { self.path = path }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The start of this process's staging folders' names (`mkdtemp` adds six characters).
    static let prefix = ".netrunner-import-\(host)-\(getpid())-"

    /// This machine's name, as it can stand in a file name (`host` if it has none).
    static let host: String = {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let kept = String(
            text.unicodeScalars.filter {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "." || $0 == "-")
            }.prefix(64))
        return kept.isEmpty ? "host" : kept
    }()

    /// The host and process id a staging folder's name holds, or `nil` for a name of another
    /// form (those of earlier versions, `.netrunner-import-XXXXXX`).
    static func owner(of name: String) -> (host: String, pid: pid_t)? {
        guard name.hasPrefix(".netrunner-import-") else { return nil }
        // <host>-<pid>-XXXXXX: the host may hold dashes, the pid and the suffix do not.
        let parts = name.dropFirst(".netrunner-import-".count).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 1].count == 6, let pid = pid_t(parts[parts.count - 2]), pid > 0
        else { return nil }
        let host = parts[..<(parts.count - 2)].joined(separator: "-")
        return host.isEmpty ? nil : (host, pid)
    }
}
