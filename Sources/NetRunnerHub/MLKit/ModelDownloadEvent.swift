/// What happens to downloads, as ML Kit's notifications tell it
/// (`.firebaseMLModelDownloadDidSucceed`, `.firebaseMLModelDownloadDidFail`), with real byte
/// progress.
public enum ModelDownloadEvent: Equatable, Sendable {
    /// A download started (after the conditions held).
    case started(name: String, version: Int, totalBytes: Int)
    /// Bytes received so far (a resumed download starts from what it had).
    case progress(name: String, receivedBytes: Int, totalBytes: Int)
    /// The whole file is being hashed before it is installed.
    case verifying(name: String)
    /// The model is downloaded, verified and installed (`didSucceed`).
    case didSucceed(CustomModel)
    /// The download failed; the reason (`didFail`). A local copy, if any, is untouched.
    case didFail(name: String, reason: String)
}
