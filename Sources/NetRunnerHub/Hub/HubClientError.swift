import NetRunnerSupport

/// Why a hub request failed, told apart as users need: the hub could not be reached (a
/// verified local copy may stand in), the hub said no (with its reason), or the bytes were wrong.
public enum HubClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The hub could not be reached (connection refused, timeout, DNS).
    case unreachable(hub: String, reason: String)
    /// The hub answered with an error status and its message.
    case refused(hub: String, status: Int, message: String)
    /// The hub's answer was not what the API promises.
    case badResponse(hub: String, reason: String)
    /// A downloaded file's SHA-256 is not the one the hub published: not installed.
    case verificationFailed(name: String, expected: String, found: String)
    /// The download conditions do not hold now (and waiting was not asked for).
    case conditionsNotMet(reason: String)
    /// No verified local copy, and the hub cannot be asked.
    case notDownloaded(name: String, reason: String)
    /// A local file or folder could not be written.
    case storage(path: String, reason: String)
    /// A local file or folder could not be read.
    case unreadable(path: String, reason: String)
    /// A local file or folder cannot be published as it is (`hub push` of a folder that is no
    /// bundle).
    case cannotPush(path: String, reason: String)
    /// The hub publishes a file larger than this client downloads (``HubClient/maximumDownloadBytes``).
    case tooLarge(hub: String, name: String, size: Int, limit: Int)

    /// A message a person can act on; a user name and password in the hub's address are masked
    /// (`http://***@host`), as everywhere a URL is shown.
    public var description: String { URLCredentials.masked(message) }

    private var message: String {
        switch self {
        case .unreachable(let hub, let reason):
            "Cannot reach the hub at \(hub): \(reason). Check --hub or NETRUNNER_HUB, and that the hub runs."
        case .refused(let hub, let status, let message):
            "The hub at \(hub) answered \(status): \(message)"
        case .badResponse(let hub, let reason):
            "The hub at \(hub) gave an answer this client cannot read: \(reason)."
        case .verificationFailed(let name, let expected, let found):
            "The download of \(name) is damaged: its SHA-256 is \(found), the hub published \(expected). "
                + "It was not installed; the copy you had (if any) is untouched. Try again."
        case .conditionsNotMet(let reason):
            "Not downloading now: \(reason)."
        case .notDownloaded(let name, let reason):
            "\(name) is not downloaded, and \(reason)."
        case .storage(let path, let reason):
            "Cannot write \(path): \(Self.clause(reason))."
        case .unreadable(let path, let reason):
            "Cannot read \(path): \(Self.clause(reason)). Check that it exists and is readable."
        case .cannotPush(let path, let reason):
            "Cannot push \(path): \(Self.clause(reason))."
        case .tooLarge(let hub, let name, let size, let limit):
            "The hub at \(hub) publishes \(name) as \(size) bytes; this client downloads at most \(limit) bytes "
                + "(--max-download-bytes). Nothing was downloaded."
        }
    }

    /// A local file's failure in this error's words: a `FileError` (whose own message says
    /// "Cannot read/write PATH: ...") becomes ``unreadable(path:reason:)`` or
    /// ``storage(path:reason:)`` with its reason alone, so a message never says the path twice,
    /// read and write at once, or ends in two full stops.
    static func file(_ error: any Error, path: String) -> HubClientError {
        switch error as? FileError {
        case .unreadable(_, let reason)?:
            .unreadable(path: path, reason: reason)
        case .writeFailed(_, let reason)?:
            .storage(path: path, reason: reason)
        case .tooLarge(_, let byteCount, let limit)?:
            .unreadable(path: path, reason: "it is \(byteCount) bytes, more than the limit of \(limit) bytes")
        case nil:
            .storage(path: path, reason: "\(error)")
        }
    }

    /// A reason as a clause: without the full stop it may end in (the message adds its own).
    static func clause(_ reason: String) -> Substring {
        var text = Substring(reason)
        while text.hasSuffix(".") || text.hasSuffix(" ") { text = text.dropLast() }
        return text
    }
}
