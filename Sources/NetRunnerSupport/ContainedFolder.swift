package import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A folder whose files others get to see: a bundle pushed to a hub or imported, an album that
// serve offers, a model bundle, a test bundle whose images reach a report. The one check of
// "does this path stay inside the folder, links included" for all of them.
//
// Invariants: a path is read only when its real path (every link resolved) lies inside the
// folder's real path; a link that leads out is refused by its own name and where it points; a
// file is opened without blocking (a FIFO cannot hang the reader), checked to be a regular file
// with fstat, and its real path is read back through the descriptor (/proc/self/fd on Linux,
// F_GETPATH on Darwin), so a link swapped in between the check and the open is refused too.

/// A folder whose files are read for others: a path under it is read only while it resolves
/// inside it, links included.
///
///     let bundle = try ContainedFolder("flowers.tiobundle", name: "the bundle folder")
///     let labels = try bundle.contents(of: "assets/labels.txt")
///
/// Links that stay inside keep working; one that leads out (`assets/notes.txt ->
/// ~/.ssh/id_ed25519`) is refused, naming the link and where it points:
/// "assets/notes.txt is a link to /root/.ssh/id_ed25519, outside the bundle folder; refused".
package struct ContainedFolder: Sendable {
    /// The folder as given (no trailing slash).
    package let path: String
    /// Its real path (links and `.`/`..` resolved).
    package let root: String
    /// What the folder is, for messages: "the bundle folder", "the album", "the test bundle".
    package let name: String

    /// Why a path under the folder is not read.
    package enum Refusal: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
        /// `link` (the path itself or a folder on its way) is a link to `target`, outside the
        /// folder `folder` (its ``ContainedFolder/name``); `kind` says what the target is when
        /// it is not a regular file or a folder (a character device...).
        case linkOutside(link: String, target: String, kind: String?, folder: String)
        /// An absolute path, or one with `..`: outside by its spelling.
        case outside(entry: String, folder: String)
        /// Nothing there: no such file, or a link to nothing (`target` is what the link holds).
        case missing(entry: String, target: String?, reason: String)
        /// Not a regular file (a folder, a named pipe, a device...), or a link to one.
        case notAFile(entry: String, kind: String, throughLink: Bool)
        /// A link to a folder, where files are listed (links to folders are not walked: no loops).
        case linkToFolder(entry: String)
        /// It could not be listed, opened or read.
        case unreadable(entry: String, reason: String)
        /// Larger than the reader's limit.
        case tooLarge(entry: String, byteCount: Int, limit: Int)

        /// The path under the folder the refusal is about.
        package var entry: String {
            switch self {
            case .linkOutside(let entry, _, _, _), .outside(let entry, _), .missing(let entry, _, _),
                .notAFile(let entry, _, _), .linkToFolder(let entry), .unreadable(let entry, _),
                .tooLarge(let entry, _, _):
                entry
            }
        }

        /// Whether the path leads out of the folder (by a link or by its spelling).
        package var leadsOutside: Bool {
            switch self {
            case .linkOutside, .outside: true
            default: false
            }
        }

        /// A clause naming the entry (its path under the folder) and what is wrong, without a
        /// full stop: "assets/notes.txt is a link to /root/.ssh/id_ed25519, outside the bundle
        /// folder; refused".
        package var description: String {
            switch self {
            case .linkOutside(let link, let target, let kind, let folder):
                "\(link) is a link to \(target)\(kind.map { " (\($0))" } ?? ""), outside \(folder); refused"
            case .outside(let entry, let folder):
                "\(entry) lies outside \(folder) (an absolute path or ..); refused"
            case .missing(let entry, let target?, _):
                "\(entry) is a link to nothing (\(target))"
            case .missing(let entry, nil, let reason):
                "\(entry): \(reason)"
            case .notAFile(let entry, let kind, let throughLink):
                "\(entry) is \(throughLink ? "a link to " : "")\(kind), not a regular file"
            case .linkToFolder(let entry):
                "\(entry) is a link to a folder; copy what it holds instead"
            case .unreadable(let entry, let reason):
                "\(entry) cannot be read: \(reason)"
            case .tooLarge(let entry, let byteCount, let limit):
                "\(entry) is \(byteCount) bytes, more than the limit of \(limit) bytes"
            }
        }
    }

    /// A file or folder found by ``entries(includingHidden:)``.
    package struct Entry: Equatable, Sendable {
        /// Its path under the folder (`assets/labels.txt`).
        package var relative: String
        /// Whether it is a folder (then it is listed before what it holds).
        package var isFolder: Bool
        /// A file's size when it was listed (0 for a folder).
        package var size: Int
    }

    /// Takes a folder.
    ///
    /// - Parameters:
    ///   - path: The folder.
    ///   - name: What it is, for messages ("the bundle folder").
    /// - Throws: ``Refusal/missing(entry:target:reason:)`` when it does not exist,
    ///   ``Refusal/notAFile(entry:kind:throughLink:)`` when it is no folder.
    package init(_ path: String, name: String) throws(Refusal) {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.path = trimmed
        self.name = name
        var status = stat()
        guard PathText.withCString(trimmed, { stat($0, &status) }) == 0, let real = PathText.realPath(trimmed) else {
            throw .missing(entry: trimmed, target: nil, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw .notAFile(entry: trimmed, kind: FileIO.fileKind(Int(status.st_mode)), throughLink: false)
        }
        root = real
    }

    /// Whether a real path lies inside the folder (or is the folder itself).
    ///
    /// - Parameter real: A real path.
    /// - Returns: `true` inside.
    package func contains(realPath real: String) -> Bool {
        real == root || real.hasPrefix(root == "/" ? "/" : root + "/")
    }

    /// The real path of a path under the folder, checked to lie inside it.
    ///
    /// - Parameter relative: A path under the folder (`assets/labels.txt`).
    /// - Returns: Its real path.
    /// - Throws: ``Refusal/outside(entry:folder:)`` for an absolute path or `..`,
    ///   ``Refusal/linkOutside(link:target:kind:folder:)`` naming the first link on the way that
    ///   leads out, ``Refusal/missing(entry:target:reason:)`` when nothing is there.
    package func resolve(_ relative: String) throws(Refusal) -> String {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: true)
        guard !relative.hasPrefix("/"), !parts.contains("..") else { throw .outside(entry: relative, folder: name) }
        // Each link on the way, checked in order, so the refusal names the link that leads out.
        var walked = ""
        for part in parts where part != "." {
            walked += (walked.isEmpty ? "" : "/") + part
            let full = path + "/" + walked
            var status = stat()
            guard PathText.withCString(full, { lstat($0, &status) }) == 0 else {
                throw .missing(entry: walked, target: nil, reason: String(cString: strerror(errno)))
            }
            guard status.st_mode & S_IFMT == S_IFLNK else { continue }
            guard let real = PathText.realPath(full) else {
                throw .missing(entry: walked, target: Self.linkText(full) ?? "?", reason: "a link to nothing")
            }
            guard contains(realPath: real) else {
                throw .linkOutside(link: walked, target: real, kind: Self.oddKind(real), folder: name)
            }
        }
        guard let real = PathText.realPath(path + "/" + relative) else {
            throw .missing(entry: relative, target: nil, reason: String(cString: strerror(errno)))
        }
        // Only when the folder itself changed under us: every link was inside.
        guard contains(realPath: real) else { throw .outside(entry: relative, folder: name) }
        return real
    }

    /// Opens a regular file under the folder, checked to lie inside it when it is opened.
    ///
    /// - Parameter relative: A path under the folder.
    /// - Returns: The descriptor (blocking, close-on-exec) and the file's size; the caller
    ///   closes the descriptor.
    /// - Throws: The refusals of ``resolve(_:)``; ``Refusal/notAFile(entry:kind:throughLink:)``
    ///   for a folder, a FIFO or a device; ``Refusal/unreadable(entry:reason:)``.
    package func open(_ relative: String) throws(Refusal) -> (descriptor: Int32, size: Int) {
        let real = try resolve(relative)
        var status = stat()
        let throughLink =
            PathText.withCString(path + "/" + relative) { lstat($0, &status) } == 0
            && status.st_mode & S_IFMT == S_IFLNK
        let descriptor = PathText.withCString(real) { openReading($0) }
        guard descriptor >= 0 else { throw .unreadable(entry: relative, reason: String(cString: strerror(errno))) }
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw .unreadable(entry: relative, reason: reason)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .notAFile(entry: relative, kind: FileIO.fileKind(Int(status.st_mode)), throughLink: throughLink)
        }
        // What was opened, by the descriptor: a link swapped in after resolve() shows here.
        if let opened = Self.path(of: descriptor), !contains(realPath: opened) {
            close(descriptor)
            throw .linkOutside(link: relative, target: opened, kind: nil, folder: name)
        }
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw .unreadable(entry: relative, reason: reason)
        }
        return (descriptor, Int(status.st_size))
    }

    /// The bytes of a regular file under the folder (see ``open(_:)``).
    ///
    /// - Parameters:
    ///   - relative: A path under the folder.
    ///   - maximumSize: The largest file read.
    /// - Returns: Its bytes.
    /// - Throws: The refusals of ``open(_:)``; ``Refusal/tooLarge(entry:byteCount:limit:)``.
    package func contents(of relative: String, maximumSize: Int = Int.max) throws(Refusal) -> Data {
        let (descriptor, size) = try open(relative)
        defer { close(descriptor) }
        guard size <= maximumSize else { throw .tooLarge(entry: relative, byteCount: size, limit: maximumSize) }
        let (data, failure) = FileIO.readAll(descriptor, count: size)
        if let failure { throw .unreadable(entry: relative, reason: String(cString: strerror(failure))) }
        return data
    }

    /// Every file and folder under the folder, depth first, each folder's entries sorted by
    /// their bytes; links to files inside are followed, a link that leads out, a link to a
    /// folder (no loops), and anything that is not a file or a folder are refused.
    ///
    /// - Parameter includingHidden: Whether names starting with `.` are listed.
    /// - Returns: The entries.
    /// - Throws: The first ``Refusal`` met.
    package func entries(includingHidden: Bool) throws(Refusal) -> [Entry] {
        var entries: [Entry] = []
        try list("", includingHidden: includingHidden, into: &entries)
        return entries
    }

    private func list(_ relative: String, includingHidden: Bool, into entries: inout [Entry]) throws(Refusal) {
        let folder = relative.isEmpty ? path : path + "/" + relative
        guard let stream = PathText.withCString(folder, { opendir($0) }) else {
            throw .unreadable(entry: relative.isEmpty ? "." : relative, reason: String(cString: strerror(errno)))
        }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                let code = errno
                closedir(stream)
                if code != 0 {
                    throw .unreadable(entry: relative.isEmpty ? "." : relative, reason: String(cString: strerror(code)))
                }
                break
            }
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { PathText.string(fromCString: $0) }
            }
            guard name != ".", name != "..", includingHidden || !name.hasPrefix(".") else { continue }
            names.append(name)
        }
        names.sort { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        for name in names {
            let child = relative.isEmpty ? name : relative + "/" + name
            let full = path + "/" + child
            var status = stat()
            guard PathText.withCString(full, { lstat($0, &status) }) == 0 else {
                throw .unreadable(entry: child, reason: String(cString: strerror(errno)))
            }
            var throughLink = false
            if status.st_mode & S_IFMT == S_IFLNK {
                throughLink = true
                _ = try resolve(child)
                guard PathText.withCString(full, { stat($0, &status) }) == 0 else {
                    throw .missing(entry: child, target: Self.linkText(full) ?? "?", reason: "a link to nothing")
                }
                guard status.st_mode & S_IFMT != S_IFDIR else {
                    throw .linkToFolder(entry: child)
                }
            }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                entries.append(Entry(relative: child, isFolder: true, size: 0))
                try list(child, includingHidden: includingHidden, into: &entries)
            case S_IFREG:
                entries.append(Entry(relative: child, isFolder: false, size: Int(status.st_size)))
            default:
                throw .notAFile(entry: child, kind: FileIO.fileKind(Int(status.st_mode)), throughLink: throughLink)
            }
        }
    }

    /// What a link holds (its target as written), if it can be read.
    static func linkText(_ path: String) -> String? {
        let capacity = Int(PATH_MAX)
        var buffer = [CChar](repeating: 0, count: capacity + 1)
        let count = PathText.withCString(path) { readlink($0, &buffer, capacity) }
        guard count >= 0 else { return nil }
        return buffer.withUnsafeBufferPointer { characters in
            characters.withMemoryRebound(to: UInt8.self) { PathText.string(fromBytes: $0.prefix(count)) }
        }
    }

    /// The kind of a link's target when it is neither a regular file nor a folder ("a
    /// character device"), for messages; `nil` otherwise.
    static func oddKind(_ real: String) -> String? {
        var status = stat()
        guard PathText.withCString(real, { stat($0, &status) }) == 0 else { return nil }
        let kind = status.st_mode & S_IFMT
        return kind == S_IFREG || kind == S_IFDIR ? nil : FileIO.fileKind(Int(status.st_mode))
    }

    /// The real path of an open file, read back through its descriptor; `nil` where the
    /// system cannot say (no /proc).
    static func path(of descriptor: Int32) -> String? {
        #if canImport(Darwin)
            var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN) + 1)
            guard fcntl(descriptor, F_GETPATH, &buffer) == 0 else { return nil }
            return PathText.string(fromBytes: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
        #else
            linkText("/proc/self/fd/\(descriptor)")
        #endif
    }
}

/// `open(2)` for reading without blocking (a FIFO cannot hang it), close-on-exec; outside the
/// type, whose own `open(_:)` would shadow it.
private func openReading(_ path: UnsafePointer<CChar>) -> Int32 {
    open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
}
