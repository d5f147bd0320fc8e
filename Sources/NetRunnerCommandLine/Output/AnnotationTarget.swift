import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage

/// Where `detect --annotate` writes annotated images.
///
/// One `.png`/`.jpg`/`.jpeg` file for one image, else a folder with one `<name>.annotated.png` per image; images sharing a base name
/// (`a/x.jpg`, `b/x.jpg`) get `x.annotated.png`, `x-2.annotated.png`... in the order the images
/// are listed, so the names are unique and the same on every run of the same command.
struct AnnotationTarget: Sendable {
    let path: String
    let isFolder: Bool
    /// The output file of each image, in folder mode.
    private let names: [String: String]

    /// The image extensions a file target may have: those of the formats written here
    /// (``ImageFormat/isWritten`` in ``ImageFormat``'s table: JPEG and PNG).
    static let fileExtensions = ImageFormat.allCases.filter(\.isWritten).flatMap(\.fileExtensions)

    /// Checks `path` and prepares it (a folder is created).
    ///
    /// - Parameters:
    ///   - path: The `--annotate` value.
    ///   - files: The images that will be annotated, in order.
    /// - Throws: `ValidationError` for a file target with several images or an unknown
    ///   extension; the file system's error when the folder cannot be created.
    init(path: String, files: [String]) throws {
        self.path = path
        let isFile = try Self.namesFile(path)
        if files.count > 1 || !isFile {
            guard !isFile else {
                throw ValidationError(
                    "--annotate \(path) names one file, but there are \(files.count) images; name a folder.")
            }
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            isFolder = true
            names = Self.uniqueNames(for: files)
        } else {
            isFolder = false
            names = [:]
        }
    }

    /// Whether `path` names one image file (`.png`, `.jpg`, `.jpeg`) rather than a folder.
    ///
    /// - Parameter path: The `--annotate` value.
    /// - Returns: `true` for a file target.
    /// - Throws: `ValidationError` for another extension, unless `path` is an existing folder
    ///   or ends with `/` (`out.gif` would otherwise silently become a folder).
    static func namesFile(_ path: String) throws -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        guard let fileExtension = dot.map({ name[name.index(after: $0)...].lowercased() }) else { return false }
        if fileExtensions.contains(fileExtension) { return true }
        guard path.hasSuffix("/") || ImageArguments.isDirectory(path) else {
            throw ValidationError(
                "--annotate \(path): .\(fileExtension) is not an image type written here; name a .png, .jpg or "
                    + ".jpeg file, or a folder (an existing one, or a name without an extension).")
        }
        return false
    }

    /// One output name per image, unique and stable.
    ///
    /// The image's base name without its extension, with `-2`, `-3`... for the later images
    /// whose name is already taken (compared without case).
    ///
    /// - Parameters:
    ///   - files: The images, in order.
    ///   - suffix: What ends each name.
    /// - Returns: The output file name of each image.
    static func uniqueNames(for files: [String], suffix: String = ".annotated.png") -> [String: String] {
        var names: [String: String] = [:]
        var taken: Set<String> = []
        for file in files where names[file] == nil {
            let name = file.split(separator: "/").last.map(String.init) ?? "image"
            let stem = name.split(separator: ".").dropLast().joined(separator: ".")
            let base = stem.isEmpty ? name : stem
            var candidate = base
            var counter = 1
            while taken.contains(candidate.lowercased()) {
                counter += 1
                candidate = "\(base)-\(counter)"
            }
            taken.insert(candidate.lowercased())
            names[file] = candidate + suffix
        }
        return names
    }

    /// Draws the answer as its task draws it (a detector's boxes) on the image at `file`
    /// (decoded again at full size) and writes it.
    func write(_ answer: ImageAnswer, on file: String) throws {
        var options = DecodingOptions()
        options.pixelFormat = .rgb24
        let image = try ImageDecoder.decode(contentsOf: file, options: options)
        let annotated = try Annotator.draw(answer, on: image.pixels)
        let output: String
        if isFolder {
            output = path + "/" + (names[file] ?? Self.uniqueNames(for: [file])[file, default: "image.annotated.png"])
        } else {
            output = path
        }
        // The written format the file's extension names (a folder's files are PNGs), else JPEG.
        let named = output.split(separator: ".").last.flatMap { ImageFormat(fileExtension: String($0)) }
        let format: ImageFormat = if let named, named.isWritten { named } else { .jpeg }
        try annotated.write(to: output, format: format, quality: 92)
    }
}
