import HTTPTypes

extension HTTPField.Name {
    /// A header name written here, checked once: the names used are valid tokens, so a failure
    /// is a programming error caught by the first request of any test.
    static func custom(_ name: String) -> HTTPField.Name {
        guard let valid = HTTPField.Name(name) else { preconditionFailure("invalid header name \(name)") }
        return valid
    }
}
