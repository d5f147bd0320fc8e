public import Foundation

/// A uniquely named folder under `FileManager.default.temporaryDirectory`, for files a test
/// writes; ``remove()`` deletes it with everything in it.
///
///     let folder = try TemporaryFolder()
///     defer { folder.remove() }
///     let path = try folder.write(Data([1, 2, 3]), named: "three.bin")
public struct TemporaryFolder: Sendable {
    /// The folder's URL.
    public let url: URL

    /// Creates a new, empty folder whose name starts with `prefix`.
    ///
    /// - Parameter prefix: The start of the folder's name.
    /// - Throws: The file system's error if the folder cannot be created.
    public init(prefix: String = "netrunner-tests") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the folder (the file need not exist).
    ///
    /// - Parameter name: A file name or relative path.
    /// - Returns: An absolute path.
    public func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    /// Writes `data` to a file named `name` in the folder.
    ///
    /// - Parameters:
    ///   - data: The bytes to write.
    ///   - name: The file's name.
    /// - Returns: The file's absolute path.
    /// - Throws: The file system's error if the file cannot be written.
    @discardableResult
    public func write(_ data: Data, named name: String) throws -> String {
        let file = url.appendingPathComponent(name)
        try data.write(to: file)
        return file.path
    }

    /// The bytes of every file under `folder`, subfolders included (0 for a missing folder):
    /// for waiting until a download has written so much.
    ///
    /// - Parameter folder: A folder's path.
    /// - Returns: The sum of the files' sizes.
    public static func bytes(under folder: String) -> Int {
        let files = FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []
        return files.reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size]) as? Int
            return total + (size ?? 0)
        }
    }

    /// Deletes the folder and its contents; a folder already gone is not an error.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
