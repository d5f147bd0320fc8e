import FoundationEssentials
import NetRunner
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The local copies of hub models, laid out by digest so versions with the same bytes share one
/// file: `blobs/sha256/<hex>.<zip|tflite>` (only verified files), `refs/<hub>/<name>/<ref>.json`
/// (what a reference last resolved to: the update check and the offline fallback), and
/// `partial/` (downloads in progress, resumable, each with a lock).
///
/// The folder is `${NETRUNNER_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/netrunner}/hub`.
public struct HubCache: Sendable {
    /// The cache's folder.
    public let folder: String

    /// The cache in a folder (default: the user's).
    public init(folder: String? = nil) {
        self.folder = folder ?? (String(ModelGate.cacheFolder.dropLast("/model-checks".count)) + "/hub")
    }

    /// A verified local file.
    public struct Entry: Equatable, Sendable {
        /// The file.
        public var path: String
        /// Its SHA-256.
        public var sha256: SHA256Digest
        /// Its size in bytes.
        public var size: Int
    }

    /// Where a verified blob lives.
    public func blobPath(sha256: SHA256Digest, format: String) -> String {
        folder + "/blobs/sha256/\(sha256.hex).\(format == "tflite" ? "tflite" : "zip")"
    }

    /// The verified blob with a digest, if cached.
    public func blob(sha256: SHA256Digest) -> Entry? {
        for format in ["zip", "tflite"] {
            let path = blobPath(sha256: sha256, format: format)
            var status = stat()
            if stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
                return Entry(path: path, sha256: sha256, size: Int(status.st_size))
            }
        }
        return nil
    }

    /// Every verified blob.
    public func blobs() -> [Entry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/blobs/sha256")) ?? []
        return names.sorted().compactMap { name in
            guard let dot = name.firstIndex(of: "."), let digest = try? SHA256Digest(validating: String(name[..<dot]))
            else { return nil }
            return blob(sha256: digest)
        }
    }

    // MARK: References

    /// The folder name of a hub's references: its address made a safe name.
    static func hubKey(_ hub: String) -> String {
        ModelImporter.safeName(
            hub.replacing("http://", with: "").replacing("https://", with: "").replacing(":", with: "_"),
            fallback: "hub")
    }

    func referenceFile(hub: String, name: String, reference: String) -> String {
        folder + "/refs/\(Self.hubKey(hub))/\(ModelImporter.safeName(name, fallback: "model"))/"
            + "\(ModelImporter.safeName(reference, fallback: "latest")).json"
    }

    /// What a reference last resolved to on a hub.
    public func lastResolution(hub: String, name: String, reference: String) -> HubResolution? {
        guard
            let data = try? FileIO.contents(
                of: referenceFile(hub: hub, name: name, reference: reference), maximumSize: 1 << 20)
        else { return nil }
        return try? JSONDecoder().decode(HubResolution.self, from: data)
    }

    /// Records what a reference resolved to (atomically).
    func record(_ resolution: HubResolution, hub: String) throws(HubClientError) {
        let file = referenceFile(hub: hub, name: resolution.name, reference: resolution.reference)
        let folder = String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)])
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileIO.writeAtomically(try JSONCoding.encoder().encode(resolution), to: file)
        } catch {
            throw .file(error, path: file)
        }
    }

    /// Every reference recorded, with the verified blob it names (if still cached).
    public func references() -> [(hub: String, resolution: HubResolution, entry: Entry?)] {
        var found: [(String, HubResolution, Entry?)] = []
        let base = folder + "/refs"
        for path in ((try? FileManager.default.subpathsOfDirectory(atPath: base)) ?? []).sorted()
        where path.hasSuffix(".json") {
            guard let data = try? FileIO.contents(of: base + "/" + path, maximumSize: 1 << 20),
                let resolution = try? JSONDecoder().decode(HubResolution.self, from: data)
            else { continue }
            let hub = String(path.split(separator: "/").first ?? "")
            found.append((hub, resolution, blob(sha256: resolution.sha256)))
        }
        return found
    }

    /// Deletes the references to a model (all hubs) and the blobs no other reference names.
    ///
    /// - Returns: The bytes freed.
    @discardableResult
    public func delete(name: String) -> Int {
        for (hub, resolution, _) in references() where resolution.name == name {
            try? FileManager.default.removeItem(
                atPath: folder + "/refs/\(hub)/\(ModelImporter.safeName(name, fallback: "model"))")
        }
        return collectGarbage()
    }

    /// Removes blobs no reference names, and partial downloads nobody is working on (older than
    /// a day).
    ///
    /// - Returns: The bytes freed.
    @discardableResult
    public func collectGarbage() -> Int {
        let kept = Set(references().map(\.resolution.sha256))
        var freed = 0
        for entry in blobs() where !kept.contains(entry.sha256) {
            if unlink(entry.path) == 0 { freed += entry.size }
        }
        let partial = folder + "/partial"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: partial)) ?? [] {
            var status = stat()
            let path = partial + "/" + name
            if stat(path, &status) == 0, time(nil) - status.st_mtim.tv_sec > 86_400 {
                freed += Int(status.st_size)
                unlink(path)
            }
        }
        return freed
    }
}
