import FoundationEssentials
import NetRunnerImage
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The image files under folders, found as `netrunner bulk` and the server's albums find them:
/// by the extensions of ``ImageFormat``'s table (``ImageFormat/allFileExtensions``), recursively,
/// sorted, hidden files skipped, links to folders not followed (no loops), and what could not be
/// searched reported, not lost.
///
///     let listing = ImageFiles.listing(of: ["Photos"])
///     for file in listing.files { ... }
public enum ImageFiles {
    /// File extensions picked up in folders (a named file is taken whatever its name): every
    /// format's, read from ``ImageFormat``'s table.
    public static let extensions: Set<String> = ImageFormat.allFileExtensions

    /// Image formats found in folders that NetRunner does not decode: counted, not silently lost.
    public static let undecodedExtensions: Set<String> = [
        "jxl", "jp2", "ico", "psd", "dng", "cr2", "nef",
    ]

    /// The image files found, and the folders (or entries) that could not be listed.
    public struct Listing: Sendable {
        /// The image files: named files as given, folders expanded (sorted, recursively).
        public var files: [String] = []
        /// Each entry that could not be read while searching, with the reason.
        public var unreadable: [(path: String, reason: String)] = []
        /// Image files of formats not decoded here (JPEG XL, JPEG 2000, camera raw...), by extension.
        public var skipped: [String: Int] = [:]

        /// An empty listing.
        public init() {}
    }

    /// The image files of some paths: files as given, folders expanded (sorted, recursively);
    /// an entry that cannot be read is listed apart and the search goes on.
    ///
    /// - Parameter paths: Files and folders.
    /// - Returns: The listing.
    public static func listing(of paths: [String]) -> Listing {
        var listing = Listing()
        for path in paths {
            if isDirectory(path) {
                collectImages(under: path, into: &listing)
            } else {
                listing.files.append(path)
            }
        }
        return listing
    }

    /// Whether a path is a folder (links followed).
    ///
    /// - Parameter path: A path.
    /// - Returns: `true` for a folder.
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return PathText.withCString(path) { stat($0, &info) } == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Walks `folder` with opendir/readdir (symbolic links to folders are not followed, so
    /// there are no loops): image files by extension, sorted by their path under `folder`; a
    /// folder that cannot be opened (no permission, a path over PATH_MAX) is noted in
    /// `listing.unreadable` and the walk goes on.
    static func collectImages(under folder: String, into listing: inout Listing) {
        let base = folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        var found: [String] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let directory = relative.isEmpty ? base : base + "/" + relative
            guard let stream = PathText.withCString(directory, { opendir($0) }) else {
                listing.unreadable.append((directory, String(cString: strerror(errno))))
                continue
            }
            defer { closedir(stream) }
            while true {
                errno = 0
                guard let entry = readdir(stream) else {
                    if errno != 0 { listing.unreadable.append((directory, String(cString: strerror(errno)))) }
                    break
                }
                let name = withUnsafePointer(to: entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) {
                        PathText.string(fromCString: $0)
                    }
                }
                guard name != ".", name != ".." else { continue }
                let child = relative.isEmpty ? name : relative + "/" + name
                let path = base + "/" + child
                var info = stat()
                if PathText.withCString(path, { lstat($0, &info) }) != 0 {
                    listing.unreadable.append((path, String(cString: strerror(errno))))
                    continue
                }
                if (info.st_mode & S_IFMT) == S_IFDIR {
                    pending.append(child)
                    continue
                }
                guard !name.hasPrefix("."), let dot = name.lastIndex(of: ".") else { continue }
                let type = name[name.index(after: dot)...].lowercased()
                guard extensions.contains(type) else {
                    if undecodedExtensions.contains(type) { listing.skipped[type, default: 0] += 1 }
                    continue
                }
                // A symbolic link to a folder is neither walked nor taken for an image.
                guard (info.st_mode & S_IFMT) != S_IFLNK || !isDirectory(path) else { continue }
                found.append(child)
            }
        }
        listing.files += found.sorted { ExactString($0) < ExactString($1) }.map { base + "/" + $0 }
    }
}
