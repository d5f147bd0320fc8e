import ArgumentParser
import FoundationEssentials

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

    /// The image files: named files as given, folders expanded (sorted, recursively).
    func files() -> [String] {
        var files: [String] = []
        for path in images {
            if Self.isDirectory(path) {
                files += Self.imagesUnder(path)
            } else {
                files.append(path)
            }
        }
        return files
    }

    /// The image files, or a usage error naming the arguments when there are none.
    ///
    /// - Returns: The files.
    /// - Throws: `ValidationError` when the arguments name no image file.
    func requiredFiles() throws -> [String] {
        let files = files()
        guard !files.isEmpty else {
            throw ValidationError("No image files found in \(images.joined(separator: ", ")).")
        }
        return files
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func imagesUnder(_ folder: String) -> [String] {
        let base = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        guard let entries = try? FileManager.default.subpathsOfDirectory(atPath: base) else { return [] }
        return entries.sorted().compactMap { entry in
            let name = entry.split(separator: "/").last.map(String.init) ?? entry
            guard !name.hasPrefix("."), let dot = name.lastIndex(of: ".") else { return nil }
            guard extensions.contains(name[name.index(after: dot)...].lowercased()) else { return nil }
            let path = base + "/" + entry
            return isDirectory(path) ? nil : path
        }
    }
}
