import ArgumentParser
import FoundationEssentials
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Image files and folders named on the command line.
struct ImageArguments: ParsableArguments {
    @Argument(help: "Image files (JPEG, PNG, BMP, PNM) or folders of them (searched recursively).")
    var images: [String] = []

    /// File extensions picked up when a folder is named (a named file is tried whatever its name).
    static let extensions: Set<String> = ["jpg", "jpeg", "png", "bmp", "ppm", "pgm", "pnm", "pbm"]

    /// The image files found, and the folders (or entries) that could not be listed.
    struct Listing {
        /// The image files: named files as given, folders expanded (sorted, recursively).
        var files: [String] = []
        /// Each entry that could not be read while searching, with the reason.
        var unreadable: [(path: String, reason: String)] = []
        /// Image files of formats not decoded here (GIF, WebP, TIFF, HEIF...), by extension.
        var skipped: [String: Int] = [:]
    }

    /// Image formats found in folders that NetRunner does not decode: counted, not silently lost.
    static let undecodedExtensions: Set<String> = [
        "gif", "webp", "tif", "tiff", "heic", "heif", "avif", "jxl", "jp2", "ico", "psd", "dng", "cr2", "nef",
    ]

    /// The image files: named files as given, folders expanded (sorted, recursively); an
    /// entry that cannot be read is listed apart and the search goes on.
    func listing() -> Listing {
        var listing = Listing()
        for path in images {
            if Self.isDirectory(path) {
                Self.collectImages(under: path, into: &listing)
            } else {
                listing.files.append(path)
            }
        }
        return listing
    }

    /// The image files, each entry that could not be searched reported on stderr (the run
    /// goes on with the others and counts them as failures), or a usage error naming the
    /// arguments when there are none.
    ///
    /// - Returns: The files, and how many entries could not be read.
    /// - Throws: `ValidationError` when the arguments name no image file.
    func requiredFiles() throws -> (files: [String], unreadable: Int) {
        let listing = listing()
        for entry in listing.unreadable {
            Console.diagnostic("\(entry.path): cannot search it: \(entry.reason); skipped.")
        }
        if !listing.skipped.isEmpty {
            let kinds = listing.skipped.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            Console.diagnostic(
                "note: skipped \(listing.skipped.values.reduce(0, +)) image file(s) of formats not decoded here ("
                    + kinds.joined(separator: ", ") + "); convert them to JPEG or PNG to include them.")
        }
        guard !listing.files.isEmpty else {
            throw ValidationError(
                "No image files found in \(images.joined(separator: ", "))"
                    + (listing.unreadable.isEmpty ? "." : " (\(listing.unreadable.count) unreadable entries)."))
        }
        return (listing.files, listing.unreadable.count)
    }

    static func isDirectory(_ path: String) -> Bool {
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
        listing.files += found.sorted().map { base + "/" + $0 }
    }
}
