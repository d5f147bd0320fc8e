import NetRunnerSupport

/// Why a model could not be imported.
///
/// Every case names what was being imported and what to do; when one is thrown the models
/// folder is as it was. A URL's user and password are never in the message.
public enum ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The source is neither an http(s) URL nor a file or folder that exists.
    case badSource(source: String, reason: String)
    /// The download failed: the server refused, the connection broke, a timeout.
    case downloadFailed(source: String, reason: String)
    /// It is larger than the limit (from `Content-Length` before any byte is kept, or counted).
    case tooLarge(source: String, limit: Int)
    /// The SHA-256 the caller expected is not the one received.
    case digestMismatch(source: String, expected: String, found: String)
    /// The bytes are not a model NetRunner imports (a zipped bundle, a bundle folder, a
    /// `.tflite`); `looksLike` names what they seem to be.
    case notAModel(source: String, looksLike: String)
    /// The model or its bundle failed validation (the same checks as `netrunner bundle validate`).
    case invalidModel(source: String, reason: String)
    /// A model with the same id is already installed and replacing was not asked for.
    case alreadyInstalled(id: String, path: String)
    /// The models folder could not be written.
    case installFailed(path: String, reason: String)

    /// A message naming the source and what to do, every URL in it without its user and password.
    public var description: String { URLCredentials.masked(message) }

    private var message: String {
        switch self {
        case .badSource(let source, let reason):
            "Cannot import \(source): \(reason)."
        case .downloadFailed(let source, let reason):
            "Cannot download \(source): \(reason). Nothing was installed; check the address and try again."
        case .tooLarge(let source, let limit):
            "Cannot import \(source): it is larger than the limit of \(limit) bytes. Nothing was kept."
        case .digestMismatch(let source, let expected, let found):
            "Cannot import \(source): its SHA-256 is \(found), not the expected \(expected). "
                + "The file is damaged or not the one meant; nothing was installed."
        case .notAModel(let source, let looksLike):
            "Cannot import \(source): it is \(looksLike), not a model. Import a zipped bundle "
                + "(.tiobundle.zip, .tfbundle.zip), a bundle folder or a .tflite model."
        case .invalidModel(let source, let reason):
            "Cannot import \(source): \(reason). Nothing was installed."
        case .alreadyInstalled(let id, let path):
            "A model with id \"\(id)\" is already installed at \(path); replace it explicitly (--replace), "
                + "or change the id in its model.json."
        case .installFailed(let path, let reason):
            "Cannot install into \(path): \(reason). The models folder is as it was."
        }
    }
}
