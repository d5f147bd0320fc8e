import Dispatch
import FoundationEssentials
package import Logging
package import NetRunner
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One index a server searches (`serve --index NAME=FILE`): NetRunner's exact file or a FAISS
/// index with its sidecar, the model that embeds its queries, and the file it came from.
package struct ServedIndex: Sendable {
    /// The index.
    package var index: any SimilarityIndex & Sendable
    /// The served model's id that embeds a query (the index's own model, as served here).
    package var model: String
    /// The index file, watched for a new version (``ServedIndexes/reloadChanged()``).
    package var path: String

    /// An index served from a file.
    ///
    /// - Parameters:
    ///   - index: The index, read from `path`.
    ///   - model: The id of the served model that embeds its queries.
    ///   - path: Its file.
    package init(index: any SimilarityIndex & Sendable, model: String, path: String) {
        self.index = index
        self.model = model
        self.path = path
    }
}

/// The indexes of a server, each replaced by the new version of its file once one is written
/// (`similar index` on a library that changed), with no pause for any request.
///
/// A search takes the index as it is (a reference, under a lock held for that only) and runs
/// on it; a reload reads the new file on a thread of its own, checks it (the same model as the
/// one served, the same number of values, a FAISS file the sidecar was written with) and only
/// then puts it in place. A file that cannot be read, or is another model's, leaves the old
/// index serving, and is said once in the log; it is tried again when it changes again.
package final class ServedIndexes: Sendable {
    /// An index and what its file was when it was read.
    private struct Entry: Sendable {
        var served: ServedIndex
        /// The index file's and (FAISS) its sidecar's size, time and file number.
        var files: [FileStamp?]
        /// The model the first version recorded, which every new one must record too.
        var recordedModel: String
    }

    /// A file's size, modification time and file number.
    struct FileStamp: Equatable, Sendable {
        var size: Int64
        var modified: Int64
        var file: UInt64
    }

    private let entries: Mutex<[String: Entry]>
    /// The stamps of new versions found unusable, by name: said once each.
    private let refused = Mutex<[String: [FileStamp?]]>([:])
    private let logger: Logger
    private static let queue = DispatchQueue(label: "netrunner.index-reload")

    /// The indexes, by name.
    ///
    /// - Parameters:
    ///   - indexes: The indexes as first read.
    ///   - logger: Where reloads and refusals are logged.
    package init(_ indexes: [String: ServedIndex], logger: Logger) {
        self.entries = Mutex(
            indexes.mapValues {
                Entry(served: $0, files: Self.stamps(of: $0.path), recordedModel: $0.index.model)
            })
        self.logger = logger
    }

    /// The names served, sorted.
    package var names: [String] { entries.withLock { $0.keys.sorted() } }

    /// An index as it is now.
    ///
    /// - Parameter name: Its name.
    /// - Returns: The index, or `nil` for none of that name.
    package func index(named name: String) -> ServedIndex? { entries.withLock { $0[name]?.served } }

    /// Reads again every index whose file changed since it was read, off the caller's thread.
    ///
    /// - Returns: The names replaced.
    @discardableResult
    package func reloadChanged() async -> [String] {
        let changed = entries.withLock { entries in
            entries.filter { Self.stamps(of: $0.value.served.path) != $0.value.files }.map { ($0.key, $0.value) }
        }
        var replaced: [String] = []
        for (name, entry) in changed {
            let stamps = Self.stamps(of: entry.served.path)
            if refused.withLock({ $0[name] }) == stamps { continue }
            let path = entry.served.path
            let outcome: Result<any SimilarityIndex & Sendable, any Error> = await withCheckedContinuation {
                continuation in
                Self.queue.async {
                    continuation.resume(returning: Result { try SimilarityIndexFile.read(from: path, verifying: true) })
                }
            }
            // Read while the file changed again: the next look reads the newer one.
            guard Self.stamps(of: entry.served.path) == stamps else { continue }
            do {
                let index = try outcome.get()
                guard index.model == entry.recordedModel, index.dimension == entry.served.index.dimension else {
                    throw IndexReloadRefusal(
                        description: "it holds embeddings of \(index.dimension) values from "
                            + "\(index.model.isEmpty ? "a model not named" : index.model), and the index served holds "
                            + "\(entry.served.index.dimension) from \(entry.recordedModel): restart serve for "
                            + "another model")
                }
                entries.withLock {
                    $0[name]?.served.index = index
                    $0[name]?.files = stamps
                }
                refused.withLock { $0[name] = nil }
                replaced.append(name)
                logger.notice(
                    "index \(name) reloaded from \(entry.served.path): \(index.count) embeddings (was \(entry.served.index.count))"
                )
            } catch {
                refused.withLock { $0[name] = stamps }
                logger.error("index \(name): the new \(entry.served.path) is not served, the old one is: \(error)")
            }
        }
        return replaced
    }

    /// The stamps of an index file and its FAISS sidecar.
    static func stamps(of path: String) -> [FileStamp?] {
        [stamp(of: path), stamp(of: FaissSidecar.path(for: path))]
    }

    private static func stamp(of path: String) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        return FileStamp(
            size: Int64(info.st_size), modified: Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec),
            file: UInt64(info.st_ino))
    }
}

/// Why a new version of an index file is not served.
struct IndexReloadRefusal: Error, CustomStringConvertible {
    var description: String
}

/// Looks at the indexes' files every `interval` and serves each new version
/// (``ServedIndexes/reloadChanged()``), until the server stops.
struct IndexReloadService: Service {
    let indexes: ServedIndexes
    let interval: Duration

    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                await indexes.reloadChanged()
            }
        }
    }
}
