import FoundationEssentials
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A model bundle shipped as a zip archive (Net Runner imports bundles this way), unpacked
/// into a private temporary folder that is removed when this value is released.
///
///     let zipped = try ZippedModelBundle(zipAt: "mobilenet.tiobundle.zip")
///     let classifier = try ImageClassifier(bundle: zipped.bundle)
///
/// The archive must hold one bundle (a `*.tiobundle` / `*.tfbundle` folder, or `model.json`
/// at its top). Entries with absolute paths, `..`, backslashes or symbolic links, encrypted
/// entries, and archives that would expand beyond ``maximumSize`` are refused before
/// anything is written; nothing is written outside the temporary folder.
///
/// - Note: Keep this value alive while the bundle's files are read (creating a classifier
///   reads them all).
public final class ZippedModelBundle: Sendable {
    /// The unpacked bundle.
    public let bundle: ModelBundle
    private let folder: String

    /// The most bytes an archive may expand to (1 GiB).
    public static let maximumSize = 1 << 30

    /// Unpacks the zipped bundle at `path`.
    ///
    /// - Parameter path: A `.zip` file.
    /// - Throws: ``ModelBundleError/notABundle(path:reason:)`` naming the problem, or the
    ///   errors of ``ModelBundle/init(path:)`` for the unpacked bundle.
    public init(zipAt path: String) throws(ModelBundleError) {
        var template = Array((Self.temporaryFolder() + "/netrunner-bundle-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw .notABundle(path: path, reason: "cannot make a temporary folder to unpack it")
        }
        let folder = String(cString: made)
        do {
            self.bundle = try Self.unpack(zipAt: path, into: folder)
            self.folder = folder
        } catch {
            Self.remove(folder)
            throw error
        }
    }

    /// Unpacks a zipped bundle into a folder, where it stays (`netrunner import` installs it
    /// from there).
    ///
    /// The bundle folder is made inside `folder`, named as in the archive (`name.tiobundle`),
    /// or `model.tiobundle` when `model.json` is at the archive's top. The same checks as
    /// ``init(zipAt:)``: nothing is written outside `folder`; on failure what was written is
    /// left for the caller to remove with `folder`.
    ///
    /// - Parameters:
    ///   - path: The `.zip` file.
    ///   - folder: An existing, empty folder.
    /// - Returns: The unpacked bundle.
    /// - Throws: ``ModelBundleError/notABundle(path:reason:)`` naming the problem, or the
    ///   errors of ``ModelBundle/init(path:)`` for the unpacked bundle.
    public static func unpack(zipAt path: String, into folder: String) throws(ModelBundleError) -> ModelBundle {
        let (archive, root) = try Self.archive(at: path)
        let rootName = root.isEmpty ? "model.tiobundle" : String(root.dropLast())
        do {
            let bundleFolder = folder + "/" + rootName
            try Self.make(bundleFolder)
            for entry in archive.entries where entry.name.hasPrefix(root) && !entry.name.hasPrefix("__MACOSX/") {
                let relative = String(entry.name.dropFirst(root.count))
                if relative.isEmpty || relative.hasSuffix("/") {
                    try Self.make(bundleFolder + "/" + relative)
                    continue
                }
                let target = bundleFolder + "/" + relative
                if let slash = target.lastIndex(of: "/") { try Self.make(String(target[..<slash])) }
                let descriptor = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
                guard descriptor >= 0 else {
                    throw ModelBundleError.notABundle(path: path, reason: "cannot unpack \(entry.name)")
                }
                defer { close(descriptor) }
                // Streamed through a bounded buffer: an archive is never held in memory whole.
                try archive.extract(entry) { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let count = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                        if count < 0 && errno == EINTR { continue }
                        guard count > 0 else {
                            throw ModelBundleError.notABundle(path: path, reason: "cannot unpack \(entry.name)")
                        }
                        offset += count
                    }
                }
            }
            return try ModelBundle(path: bundleFolder)
        } catch {
            throw (error as? ModelBundleError) ?? .notABundle(path: path, reason: "\(error)")
        }
    }

    /// Opens a zipped bundle's archive (reading only its central directory) and finds the
    /// bundle's root: the folder holding its one `model.json` (`""` when it is at the top).
    ///
    /// - Parameter path: The zip file.
    /// - Returns: The archive and the root, ending in `/` unless empty.
    /// - Throws: ``ModelBundleError/notABundle(path:reason:)`` naming the problem.
    static func archive(at path: String) throws(ModelBundleError) -> (archive: ZipArchive, root: String) {
        guard let source = ZipArchive.Source(path: path) else {
            throw .notABundle(path: path, reason: "no such file, not readable, or not a regular file")
        }
        var limits = ZipArchive.Limits()
        limits.maximumTotalSize = Self.maximumSize
        limits.maximumEntrySize = Self.maximumSize
        let archive: ZipArchive
        do {
            guard
                let opened = try ZipArchive.reading(
                    source, limits: limits, fail: { reason in ModelBundleError.notABundle(path: path, reason: reason) })
            else { throw ModelBundleError.notABundle(path: path, reason: "it is not a zip archive") }
            archive = opened
        } catch let error as ModelBundleError {
            throw error
        } catch {
            throw .notABundle(path: path, reason: "\(error)")
        }
        // The bundle's root: the folder holding model.json (ignoring __MACOSX and hidden files).
        let descriptions = archive.entries.map(\.name).filter {
            ($0 == "model.json" || $0.hasSuffix("/model.json")) && !$0.hasPrefix("__MACOSX/")
        }
        guard descriptions.count == 1, let description = descriptions.first else {
            throw .notABundle(
                path: path, reason: "it holds \(descriptions.count) model.json files; a zipped bundle holds one")
        }
        let root = String(description.dropLast("model.json".count))
        guard !root.dropLast().contains("/") else {
            throw .notABundle(
                path: path, reason: "its model.json is nested in \(root); put the bundle folder at the top")
        }
        return (archive, root)
    }

    deinit { Self.remove(folder) }

    /// Whether `path` is a zip archive (by its first bytes).
    ///
    /// - Parameter path: A file.
    /// - Returns: `true` for a zip file.
    public static func isZip(_ path: String) -> Bool {
        guard let descriptor = try? FileIO.openRegularFile(path).descriptor else { return false }
        defer { close(descriptor) }
        var magic = [UInt8](repeating: 0, count: 4)
        return read(descriptor, &magic, 4) == 4 && magic == [0x50, 0x4B, 0x03, 0x04]
    }

    private static func temporaryFolder() -> String {
        guard let value = getenv("TMPDIR") else { return "/tmp" }
        let folder = String(cString: value)
        return folder.isEmpty ? "/tmp" : folder
    }

    private static func make(_ folder: String) throws(ModelBundleError) {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .notABundle(path: folder, reason: "cannot create the folder")
        }
    }

    private static func remove(_ folder: String) {
        try? FileManager.default.removeItem(atPath: folder)
    }
}
