import Dispatch
import FoundationEssentials
public import NetRunner
import NetRunnerImage
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Net Runner's import of a model by URL, for a models folder: download, unpack, validate,
/// install, one engine for `netrunner import`, the server's Settings and the hub client.
///
///     let importer = ModelImporter(modelsFolder: "Models")
///     let model = try await importer.importModel(from: "https://example.org/flowers.tiobundle.zip")
///     print(model.id, model.path)   // flowers  Models/flowers.tiobundle
///
/// What it takes: an http(s) URL or a local path to a zipped bundle (`.tiobundle.zip`,
/// `.tfbundle.zip`), a bundle folder, or a `.tflite` model (its metadata or defaults describe
/// it). What it checks before anything is visible in the models folder:
/// - size: `Content-Length` over the limit is refused before the body is read, and a body is
///   cut off at the limit; a zip must expand to at most 1 GiB in all
///   (``ZippedModelBundle/maximumSize``);
/// - an expected SHA-256, if given;
/// - the archive: exactly one bundle, no absolute paths, `..`, links or encrypted entries;
/// - a bundle folder: only what lies inside it is copied (a link that leads out is refused,
///   naming the link and where it points; links that stay inside are copied as files);
/// - the model: the checks of `netrunner bundle validate` (``LoadedModel/validateAsImageModel()``:
///   the description, a compile-and-run in a child process, an image task it runs as).
///
/// Everything happens in a hidden staging folder inside the models folder
/// (`.netrunner-import-*`, skipped by ``ModelDirectory``), so the last step is one `rename(2)`:
/// the models folder holds the old model or the new one, never half of either. A model with an
/// id already installed is refused unless `replace` is set.
public struct ModelImporter: Sendable {
    /// The folder models are installed into (made if missing).
    public var modelsFolder: String
    /// The most bytes accepted from a URL or file (default 1 GiB).
    public var maximumBytes: Int
    /// Whether URLs may lead to loopback, private, link-local and other non-public addresses
    /// (`--allow-private-imports`), directly, by a name that resolves there or by a redirect
    /// (default: no, against server-side request forgery; see ``checkAddress(of:)``).
    public var allowsPrivateAddresses: Bool
    /// Hosts (as URLs write them) taken as public whatever they resolve to: for tests, whose
    /// servers are all on loopback.
    package var publicHosts: Set<String> = []

    /// Creates an importer.
    ///
    /// - Parameters:
    ///   - modelsFolder: The folder models are installed into (`Models`, as `evaluate` and
    ///     `serve` read it).
    ///   - maximumBytes: The largest download or file accepted.
    ///   - allowsPrivateAddresses: Whether URLs may lead to loopback, private and link-local
    ///     addresses.
    public init(
        modelsFolder: String = "Models", maximumBytes: Int = ZippedModelBundle.maximumSize,
        allowsPrivateAddresses: Bool = false
    ) {
        self.modelsFolder =
            modelsFolder.count > 1 && modelsFolder.hasSuffix("/") ? String(modelsFolder.dropLast()) : modelsFolder
        self.maximumBytes = maximumBytes
        self.allowsPrivateAddresses = allowsPrivateAddresses
    }

    /// The check of the hosts downloads connect to.
    var addresses: AddressCheck {
        var check = AddressCheck(allowsPrivate: allowsPrivateAddresses)
        check.publicHosts = publicHosts
        return check
    }

    /// Checks, before anything starts, that an http(s) URL's host is one imports may download
    /// from: every address the name resolves to is public, unless ``allowsPrivateAddresses``
    /// (the server answers 400 at once; redirects are checked as they come, during the import).
    ///
    /// - Parameter url: An http(s) URL.
    /// - Throws: ``ImportError/badSource(source:reason:)`` naming the address and why.
    public func checkAddress(of url: String) async throws(ImportError) {
        _ = try await addresses.target(for: url, source: URLCredentials.masked(url), redirected: false)
    }

    /// Imports a model into the models folder: ``stage(from:sha256:progress:)`` then
    /// ``install(_:replace:progress:)``.
    ///
    /// - Parameters:
    ///   - source: An http(s) URL, or the path of a zipped bundle, a bundle folder or a `.tflite`.
    ///   - sha256: The SHA-256 the file must have (64 hex digits), if known.
    ///   - replace: Whether a model with the same id may be replaced.
    ///   - progress: Told where the import stands (called on any thread).
    /// - Returns: The installed model.
    /// - Throws: ``ImportError``; the models folder is then as it was.
    public func importModel(
        from source: String, sha256: String? = nil, replace: Bool = false,
        progress: @escaping @Sendable (ImportProgress) -> Void = { _ in }
    ) async throws(ImportError) -> ImportedModel {
        let staged = try await stage(from: source, sha256: sha256, progress: progress)
        return try install(staged, replace: replace, progress: progress)
    }

    /// Downloads, unpacks and validates a model into a hidden staging folder of the models folder.
    ///
    /// Nobody sees it there until ``install(_:replace:progress:)`` (the server checks the id
    /// against the models it serves in between). Releasing the result removes the staging folder.
    ///
    /// - Parameters:
    ///   - source: An http(s) URL, or the path of a zipped bundle, a bundle folder or a `.tflite`.
    ///   - sha256: The SHA-256 the file must have (64 hex digits), if known.
    ///   - progress: Told where the import stands (called on any thread).
    /// - Returns: The validated model, staged.
    /// - Throws: ``ImportError``.
    public func stage(
        from source: String, sha256: String? = nil, progress: @escaping @Sendable (ImportProgress) -> Void = { _ in }
    ) async throws(ImportError) -> StagedModel {
        // In messages and listings, a URL's user and password are masked.
        let named = URLCredentials.masked(source)
        let expected = sha256?.lowercased()
        if let expected, expected.count != 64 || !expected.allSatisfy(\.isHexDigit) {
            throw .badSource(source: named, reason: "--sha256 must be 64 hex digits, found \"\(expected.prefix(80))\"")
        }
        try makeFolder(modelsFolder)
        removeAbandonedStagingFolders()
        var template = Array((modelsFolder + "/" + StagingFolder.prefix + "XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw .installFailed(path: modelsFolder, reason: String(cString: strerror(errno)))
        }
        let staging = String(cString: made)
        // Owned by the result from here: released (on failure, at once) it removes the folder.
        let stagingFolder = StagingFolder(path: staging)

        // 1. The bytes: downloaded into the staging folder, or a local file read in place.
        var file: String?
        var folder: String?
        var digest = ""
        var byteCount = 0
        var suggestedName: String
        if HTTPDownload.isHTTP(source) {
            let downloaded = staging + "/download"
            let outcome = try await HTTPDownload.download(
                source, to: downloaded, limit: maximumBytes, addresses: addresses
            ) {
                progress(.downloading(received: $0, total: $1))
            }
            (file, digest, byteCount, suggestedName) = (
                downloaded, outcome.sha256, outcome.byteCount, outcome.suggestedName
            )
        } else if source.contains("://") {
            throw .badSource(source: named, reason: "only http:// and https:// URLs and local files can be imported")
        } else {
            suggestedName = source.split(separator: "/").last.map(String.init) ?? "model"
            var status = stat()
            guard PathText.withCString(source, { stat($0, &status) }) == 0 else {
                throw .badSource(source: named, reason: "no such file or folder")
            }
            if status.st_mode & S_IFMT == S_IFDIR {
                folder = source
            } else {
                guard Int(status.st_size) <= maximumBytes else { throw .tooLarge(source: named, limit: maximumBytes) }
                let (hashed, size) = try await offloaded { () throws(ImportError) in
                    do {
                        return try SHA256.hexDigest(ofFileAt: source)
                    } catch {
                        throw ImportError.badSource(source: named, reason: "\(error)")
                    }
                }
                (file, digest, byteCount) = (source, hashed, size)
            }
        }
        if let expected {
            guard file != nil else {
                throw .badSource(source: named, reason: "--sha256 checks a file (a zip or a .tflite), not a folder")
            }
            guard digest == expected else { throw .digestMismatch(source: named, expected: expected, found: digest) }
        }

        // 2. What it is, staged as it will be installed.
        let unpacked = staging + "/unpacked"
        try makeFolder(unpacked)
        let staged: String
        if let folder {
            guard ModelBundle.isBundle(folder) else {
                throw .notAModel(source: named, looksLike: "a folder without a model.json (not a bundle)")
            }
            let copy = unpacked + "/" + Self.safeName(suggestedName, fallback: "model.tiobundle")
            try await offloaded { () throws(ImportError) in
                try Self.copyContained(folder, to: copy, source: named)
            }
            staged = copy
        } else if let file {
            switch Self.sniff(file) {
            case .zip:
                progress(.unpacking)
                staged = try await offloaded { () throws(ImportError) in
                    do {
                        return try ZippedModelBundle.unpack(zipAt: file, into: unpacked).path
                    } catch {
                        throw ImportError.invalidModel(source: named, reason: Self.reason(error, staging: staging))
                    }
                }
            case .tflite:
                var name = Self.safeName(suggestedName, fallback: "model.tflite")
                if !name.lowercased().hasSuffix(".tflite") { name += ".tflite" }
                staged = unpacked + "/" + name
                do {
                    if file.hasPrefix(staging + "/") {
                        try FileManager.default.moveItem(atPath: file, toPath: staged)
                    } else {
                        try FileManager.default.copyItem(atPath: file, toPath: staged)
                    }
                } catch {
                    throw .installFailed(path: staged, reason: "cannot copy the model: \(error)")
                }
            case .other(let looksLike):
                throw .notAModel(source: named, looksLike: looksLike)
            }
        } else {
            preconditionFailure("a source is a file or a folder")
        }

        // 3. The checks of `bundle validate`, off the caller's thread (a child process runs).
        progress(.validating)
        let (loaded, kind) = try await offloaded { () throws(ImportError) -> (LoadedModel, ImageTask.Kind) in
            do {
                let loaded = try LoadedModel(.path(staged))
                return (loaded, try loaded.validateAsImageModel())
            } catch {
                throw ImportError.invalidModel(source: named, reason: Self.reason(error, staging: staging))
            }
        }
        if folder != nil {
            digest = loaded.sha256
            byteCount = loaded.modelData.count
        }
        let id = loaded.description?.id ?? ModelDirectory.id(ofFile: staged)
        guard Self.isSafeID(id) else {
            throw .invalidModel(source: named, reason: "its id \"\(id.prefix(80))\" is not a usable model id")
        }

        return StagedModel(
            id: id, name: loaded.description?.name ?? loaded.metadata?.name ?? id, kind: kind, sha256: digest,
            byteCount: byteCount,
            source: named, path: staged, folder: stagingFolder)
    }

    /// Moves a staged model into the models folder: one `rename(2)` (two when replacing, the
    /// old model put back if the second fails).
    ///
    /// - Parameters:
    ///   - staged: A model from ``stage(from:sha256:progress:)`` of this importer.
    ///   - replace: Whether a model with the same id may be replaced.
    ///   - progress: Told `.installing`.
    /// - Returns: The installed model.
    /// - Throws: ``ImportError/alreadyInstalled(id:path:)``, ``ImportError/installFailed(path:reason:)``.
    public func install(
        _ staged: StagedModel, replace: Bool = false, progress: @Sendable (ImportProgress) -> Void = { _ in }
    ) throws(ImportError) -> ImportedModel {
        progress(.installing)
        let id = staged.id
        let existing = (try? ModelDirectory(path: modelsFolder))?.models[id]
        if let existing, !replace { throw .alreadyInstalled(id: id, path: existing) }
        let stagedName = staged.path.split(separator: "/").last.map(String.init) ?? "model"
        var target = modelsFolder + "/" + stagedName
        if existing != target, FileManager.default.fileExists(atPath: target) {
            // Another model holds that name: install under the id instead.
            let suffix = stagedName.lowercased().hasSuffix(".tflite") ? ".tflite" : ".tiobundle"
            target = modelsFolder + "/" + id + suffix
            guard existing == target || !FileManager.default.fileExists(atPath: target) else {
                throw .installFailed(path: target, reason: "a file of that name exists and holds another model")
            }
        }
        let aside = staged.folder.path + "/replaced"
        if let existing, rename(existing, aside) != 0 {
            throw .installFailed(path: existing, reason: String(cString: strerror(errno)))
        }
        guard rename(staged.path, target) == 0 else {
            let reason = String(cString: strerror(errno))
            if let existing { rename(aside, existing) }
            throw .installFailed(path: target, reason: reason)
        }
        return ImportedModel(
            id: id, name: staged.name, path: target, kind: staged.kind, sha256: staged.sha256,
            byteCount: staged.byteCount, replaced: existing != nil)
    }

    // MARK: Helpers

    /// What a file's first bytes say it is.
    enum Sniffed: Equatable {
        case zip
        case tflite
        case other(String)
    }

    static func sniff(_ path: String) -> Sniffed {
        guard let (descriptor, _) = try? FileIO.openRegularFile(path) else { return .other("an unreadable file") }
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: 512)
        let count = max(0, read(descriptor, &head, head.count))
        head = Array(head.prefix(count))
        func starts(_ bytes: [UInt8]) -> Bool { head.starts(with: bytes) }
        if count == 0 { return .other("an empty file") }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return .zip }
        if count >= 8, Array(head[4..<8]) == Array("TFL3".utf8) { return .tflite }
        let text = String(decoding: head.prefix(256), as: UTF8.self).lowercased()
        let trimmed = text.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" })
        if trimmed.hasPrefix("<!doctype html") || trimmed.hasPrefix("<html") || trimmed.hasPrefix("<head") {
            return .other("an HTML page (a web page, perhaps an error or a login page)")
        }
        if trimmed.hasPrefix("{") || trimmed.hasPrefix("[") { return .other("JSON text") }
        if let image = ImageFormat.sniff(head) {
            return .other(image == .avif ? "an AVIF image" : image == .heif ? "a HEIC image" : "a \(image) image")
        }
        if starts([0x1F, 0x8B]) { return .other("a gzip file (unpack it first: a zip is expected)") }
        if count > 262, Array(head[257..<262]) == Array("ustar".utf8) { return .other("a tar archive") }
        if starts(Array("%PDF".utf8)) { return .other("a PDF document") }
        return .other("a file in no model format NetRunner reads")
    }

    /// A file or folder name made safe: only letters, digits, `.`, `-`, `_`, not hidden, at
    /// most 120 bytes.
    package static func safeName(_ name: String, fallback: String) -> String {
        let kept = String(
            String.UnicodeScalarView(
                name.unicodeScalars.map {
                    ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
                        || "._-".unicodeScalars.contains($0)
                        ? $0 : "_"
                }))
        let trimmed = String(kept.drop(while: { $0 == "." }).prefix(120))
        return trimmed.isEmpty || trimmed.allSatisfy({ $0 == "_" }) ? fallback : trimmed
    }

    /// Whether an id can name a model in URLs and file names.
    static func isSafeID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 200 && id != "." && id != ".." && !id.hasPrefix(".")
            && !id.contains("/") && !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\u{7F}" })
    }

    /// A validation error's text, the staging folder's path left out (the names inside the
    /// bundle stay), without its final full stop.
    static func reason(_ error: any Error, staging: String) -> String {
        var text = "\(error)".replacing(staging + "/unpacked/", with: "")
        text = text.replacing(staging + "/", with: "")
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Copies a bundle folder, but only what lies inside it (``ContainedFolder``, as `hub push`
    /// and `evaluate` read folders): files behind links that stay inside are copied as files;
    /// a link that leads out, a link to a folder, a FIFO or a device fail the import, naming the
    /// link and where it points ("assets/notes.txt is a link to /root/.ssh/id_ed25519, outside
    /// the bundle folder; refused"), so an imported model never carries a link to elsewhere.
    ///
    /// - Parameters:
    ///   - folder: The bundle folder.
    ///   - target: The copy (made here; its parent exists).
    ///   - source: The source as the user named it, for errors.
    /// - Throws: ``ImportError/badSource(source:reason:)`` for what cannot be copied as it is,
    ///   ``ImportError/installFailed(path:reason:)`` when the copy cannot be written.
    static func copyContained(_ folder: String, to target: String, source: String) throws(ImportError) {
        let contained: ContainedFolder
        let entries: [ContainedFolder.Entry]
        do throws(ContainedFolder.Refusal) {
            contained = try ContainedFolder(folder, name: "the bundle folder")
            entries = try contained.entries(includingHidden: true)
        } catch {
            throw .badSource(source: source, reason: error.description)
        }
        func failed(_ path: String) -> ImportError {
            .installFailed(path: path, reason: "cannot copy the bundle: \(String(cString: strerror(errno)))")
        }
        guard PathText.withCString(target, { mkdir($0, 0o755) }) == 0 else { throw failed(target) }
        for entry in entries {
            let copy = target + "/" + entry.relative
            if entry.isFolder {
                guard PathText.withCString(copy, { mkdir($0, 0o755) }) == 0 else { throw failed(copy) }
                continue
            }
            let input: Int32
            do throws(ContainedFolder.Refusal) {
                input = try contained.open(entry.relative).descriptor
            } catch {
                throw .badSource(source: source, reason: error.description)
            }
            defer { close(input) }
            let output = PathText.withCString(copy) {
                open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
            }
            guard output >= 0 else { throw failed(copy) }
            defer { close(output) }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { throw failed(folder + "/" + entry.relative) }
                if count == 0 { break }
                if let code = buffer.withUnsafeBytes({
                    FileIO.writeAll(output, UnsafeRawBufferPointer(rebasing: $0[..<count]))
                }) {
                    errno = code
                    throw failed(copy)
                }
            }
        }
    }

    private func makeFolder(_ path: String) throws(ImportError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .installFailed(path: path, reason: "cannot create the folder")
        }
    }

    /// Removes the staging folders that imports interrupted by a crash or `kill -9` left.
    ///
    /// In the models folder: those of this machine's processes that are gone (a folder's name holds
    /// the host and process id of its import, `.netrunner-import-<host>-<pid>-XXXXXX`, as the
    /// hub names its uploads), those of other machines sharing the folder after a day, and
    /// older unnamed ones after an hour. `import` and `serve` call it when they start; imports
    /// of processes still running are left alone.
    ///
    /// - Returns: The folders removed.
    @discardableResult
    public func removeAbandonedStagingFolders() -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: modelsFolder) else { return [] }
        let now = time(nil)
        var removed: [String] = []
        for name in names where name.hasPrefix(".netrunner-import-") {
            let path = modelsFolder + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            let age = now - status.st_mtim.tv_sec
            let abandoned: Bool
            if let (host, pid) = StagingFolder.owner(of: name) {
                if host == StagingFolder.host {
                    abandoned = pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
                } else {
                    abandoned = age > 24 * 3600
                }
            } else {
                abandoned = age > 3600
            }
            if abandoned, (try? FileManager.default.removeItem(atPath: path)) != nil { removed.append(path) }
        }
        return removed
    }
}
