import Synchronization

/// ML Kit's older model manager: start a download and watch its progress, ask whether a
/// remote model is downloaded, fall back to a ``CustomLocalModel`` until it is.
///
///     let remote = CustomRemoteModel(name: "flowers")
///     let progress = ModelManager.modelManager().download(remote, conditions: ModelDownloadConditions())
///     if ModelManager.modelManager().isModelDownloaded(remote) { ... } else { /* CustomLocalModel */ }
public final class ModelManager: Sendable {
    /// The downloader it uses.
    public let downloader: ModelDownloader

    /// A manager over a downloader.
    public init(downloader: ModelDownloader = ModelDownloader()) {
        self.downloader = downloader
    }

    /// ML Kit's spelling: a manager for the default hub and cache.
    public static func modelManager(downloader: ModelDownloader = ModelDownloader()) -> ModelManager {
        ModelManager(downloader: downloader)
    }

    /// What happens to downloads (``ModelDownloadEvent``: `didSucceed`, `didFail`, progress).
    public var events: AsyncStream<ModelDownloadEvent> { downloader.events }

    /// Starts downloading the newest version the reference names; returns at once.
    ///
    /// - Parameters:
    ///   - remote: The remote model.
    ///   - conditions: When the download may start.
    /// - Returns: Its progress.
    @discardableResult
    public func download(_ remote: CustomRemoteModel, conditions: ModelDownloadConditions = ModelDownloadConditions())
        -> ModelDownloadProgress
    {
        let progress = ModelDownloadProgress()
        let downloader = self.downloader
        let name = "\(remote.name)@\(remote.reference)"
        let task = Task.detached {
            let events = downloader.events
            let watcher = Task {
                for await event in events {
                    if case .progress(name, let received, let total) = event { progress.update(received, total) }
                }
            }
            defer { watcher.cancel() }
            do throws(HubClientError) {
                let model = try await downloader.getModel(
                    name: name, downloadType: .latestModel, conditions: conditions)
                progress.update(model.size, model.size)
                return Result<CustomModel, HubClientError>.success(model)
            } catch {
                return .failure(error)
            }
        }
        progress.task.withLock { $0 = task }
        return progress
    }

    /// Whether a verified copy of what the remote model last resolved to is on this machine.
    public func isModelDownloaded(_ remote: CustomRemoteModel) -> Bool {
        downloader.localModel(remote) != nil
    }

    /// The local file of a downloaded remote model (ML Kit's `latestModelFilePath`), if any.
    public func latestModelFilePath(_ remote: CustomRemoteModel) -> String? {
        downloader.localModel(remote)?.path
    }

    /// The remote model's file if downloaded, else the local model's (the seed's fallback).
    public func modelPath(_ remote: CustomRemoteModel, fallback local: CustomLocalModel) -> String {
        latestModelFilePath(remote) ?? local.modelPath
    }

    /// Deletes a remote model's local copies.
    public func deleteDownloadedModel(_ remote: CustomRemoteModel) {
        downloader.cache.delete(name: remote.name)
    }
}
