// Folders and files that only this user can have written, checked as OpenSSH's StrictModes
// checks ~/.ssh: what NetRunner remembers between runs (model-check verdicts, hub downloads) is
// trusted only where no other local user could have planted it.
//
// Invariants: a folder is trusted when it and every folder above it is owned by this user or by
// root and writable by no one else, a root-owned sticky folder such as /tmp excepted (others
// cannot rename or remove what is in it); a file is trusted when it is a regular file (not
// followed through a link) owned by this user and writable by no one else.

package import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

package enum PrivateFolder {
    /// The user's cache folder for NetRunner, never a folder shared by every user.
    ///
    /// `$NETRUNNER_CACHE_DIR`, else `$XDG_CACHE_HOME/netrunner`, else `~/.cache/netrunner` with the home folder from `$HOME` or,
    /// when HOME is unset (systemd services, cron, containers), from the password database; only
    /// when neither names a home, `/tmp/netrunner-<uid>`, which ``prepare(_:)`` refuses if another
    /// user made it first.
    package static var cacheBase: String {
        let environment = { (name: String) -> String? in
            getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        if let folder = environment("NETRUNNER_CACHE_DIR") { return folder }
        // The XDG specification ignores a relative XDG_CACHE_HOME.
        if let folder = environment("XDG_CACHE_HOME"), folder.hasPrefix("/") { return folder + "/netrunner" }
        if let home = environment("HOME") ?? passwordDatabaseHome() { return home + "/.cache/netrunner" }
        return "/tmp/netrunner-\(geteuid())"
    }

    /// This user's home folder from the password database, if it names one.
    package static func passwordDatabaseHome() -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let directory = entry.pw_dir
        else { return nil }
        let home = String(cString: directory)
        return home.hasPrefix("/") && home != "/" ? home : nil
    }

    /// Makes `path` and its missing parents (mode 0700) and checks that no other user can write it.
    ///
    /// It and every folder above it must be owned by this user or root and not writable by group or
    /// others (a root-owned sticky folder such as /tmp excepted). `path` itself, when this user's,
    /// is narrowed to mode 0700.
    ///
    /// - Parameter path: An absolute folder path.
    /// - Returns: `nil` when the folder is private, else why not (a sentence naming the folder).
    package static func prepare(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "\(path) is not an absolute path" }
        var current = ""
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                return "\(current) cannot be made (\(String(cString: strerror(errno))))"
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return "\(path) cannot be read (\(String(cString: strerror(errno))))" }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "\(path) is not a folder (a link or a file)" }
        guard info.st_uid == geteuid() else { return "\(path) belongs to user \(info.st_uid), not to this user" }
        if info.st_mode & 0o077 != 0 { chmod(path, 0o700) }
        // Every folder above, as ssh's StrictModes.
        var above = path
        while let slash = above.lastIndex(of: "/") {
            above = slash == above.startIndex ? "/" : String(above[..<slash])
            guard stat(above, &info) == 0 else { return "\(above) cannot be read" }
            let owner = info.st_uid
            guard owner == geteuid() || owner == 0 else {
                return "\(above), above \(path), belongs to user \(owner), who could replace what is in it"
            }
            let sticky = info.st_mode & S_ISVTX != 0
            if info.st_mode & 0o022 != 0 && !(sticky && owner == 0) {
                return "\(above), above \(path), is writable by other users"
            }
            if above == "/" { break }
        }
        return nil
    }

    /// Reads a file that must be this user's own: a regular file (a link is not followed) owned by
    /// this user and writable by no one else, at most `maximumSize` bytes.
    ///
    /// - Returns: Its bytes, or `nil` when it is missing, someone else's, or not a plain file.
    package static func ownFileContents(_ path: String, maximumSize: Int) -> Data? {
        let descriptor = PathText.withCString(path) { open($0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, isOwnFile(info), Int(info.st_size) <= maximumSize else { return nil }
        var data = Data(count: Int(info.st_size))
        let complete = data.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            var done = 0
            while done < buffer.count {
                let count = read(descriptor, base + done, buffer.count - done)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return false }
                done += count
            }
            return true
        }
        return complete ? data : nil
    }

    /// Whether a file's status is that of a regular file of this user's that no one else can write.
    static func isOwnFile(_ info: stat) -> Bool {
        info.st_mode & S_IFMT == S_IFREG && info.st_uid == geteuid() && info.st_mode & 0o022 == 0
    }
}
