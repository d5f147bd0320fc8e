import FoundationEssentials

/// A hidden folder of the models folder an import works in, removed with everything in it
/// when the last reference goes.
final class StagingFolder: Sendable {
    let path: String

    init(path: String) { self.path = path }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
