import FoundationEssentials
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Published files on disk, named by their SHA-256 (`blobs/sha256/<hex>`): versions with the
/// same bytes share one file, and a file is never changed once in place (written beside it,
/// then renamed in).
struct BlobStore: Sendable {
    let folder: String

    init(dataFolder: String) throws {
        folder = dataFolder + "/blobs/sha256"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// Where the blob with a digest is (it may not exist).
    func path(of sha256: String) -> String { folder + "/" + sha256 }

    /// Whether a blob is stored.
    func contains(_ sha256: String) -> Bool {
        var status = stat()
        return stat(path(of: sha256), &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// Moves a verified file into the store under its digest (same file system: one rename);
    /// if the blob is there already the file is removed.
    func adopt(_ file: String, sha256: String) throws {
        if contains(sha256) {
            unlink(file)
            return
        }
        guard rename(file, path(of: sha256)) == 0 else {
            throw HubError.conflict("cannot store the upload: \(String(cString: strerror(errno)))")
        }
        // The rename is durable once the folder is.
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }

    /// The size of a blob.
    func size(of sha256: String) -> Int? {
        var status = stat()
        guard stat(path(of: sha256), &status) == 0 else { return nil }
        return Int(status.st_size)
    }
}
