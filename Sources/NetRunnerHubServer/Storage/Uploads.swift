import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where uploads stream in before they are validated: one folder per hub process
/// (`uploads/<host>-<pid>`), so nodes sharing a data folder never touch each other's.
enum Uploads {
    /// This process's folder.
    static func folder(in base: String) -> String {
        base + "/" + processTag
    }

    static let processTag = "\(host)-\(getpid())"

    /// This machine's name (`host` if it has none).
    static let host: String = {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? "host" : text
    }()

    /// Removes the folders of this machine's hub processes that are gone (a crash or kill -9).
    static func removeAbandoned(in base: String) {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] {
            guard entry.hasPrefix(host + "-"), let pid = Int32(entry.dropFirst(host.count + 1)) else { continue }
            if pid == getpid() || kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: base + "/" + entry)
            }
        }
    }
}
