/// Where an import stands, reported as it goes (`netrunner import`'s progress bar, the web
/// app's Settings).
public enum ImportProgress: Equatable, Sendable {
    /// Bytes received so far, and the total when the server said (`Content-Length`).
    case downloading(received: Int, total: Int?)
    /// Unpacking the zipped bundle.
    case unpacking
    /// Checking the description, the model (in a child process) and the task it runs as.
    case validating
    /// Moving it into the models folder.
    case installing
}
