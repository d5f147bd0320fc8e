import Synchronization

/// A download's progress (ML Kit returns an `NSProgress`): bytes so far, and the result.
public final class ModelDownloadProgress: Sendable {
    private let counts = Mutex<(completed: Int, total: Int)>((0, 0))
    let task = Mutex<Task<Result<CustomModel, HubClientError>, Never>?>(nil)

    init() {}

    func update(_ completed: Int, _ total: Int) {
        counts.withLock { $0 = (completed, total) }
    }

    /// Bytes received so far.
    public var completedUnitCount: Int { counts.withLock { $0.completed } }
    /// The file's size, once known.
    public var totalUnitCount: Int { counts.withLock { $0.total } }
    /// From 0 to 1.
    public var fractionCompleted: Double {
        let (completed, total) = counts.withLock { $0 }
        return total > 0 ? Double(completed) / Double(total) : 0
    }

    /// Waits for the download to finish.
    ///
    /// - Returns: The downloaded model.
    /// - Throws: ``HubClientError``.
    public func value() async throws(HubClientError) -> CustomModel {
        guard let task = task.withLock({ $0 }) else {
            throw .badResponse(hub: "", reason: "the download was not started")
        }
        return try await task.value.get()
    }
}
