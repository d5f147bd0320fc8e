import HTTPTypes

extension HTTPField.Name {
    /// A header name written here, checked once: the names used are valid tokens, so a failure
    /// is a programming error caught by the first request of any test.
    static func custom(_ name: String) -> HTTPField.Name {
        guard let valid = HTTPField.Name(name) else { preconditionFailure("invalid header name \(name)") }
        return valid
    }

    /// The image's width, beside a segmenter's mask answered as a PNG (`Accept: image/png`),
    /// whose own size may be the model's.
    static let imageWidth = custom("Image-Width")
    /// The image's height, beside a segmenter's mask answered as a PNG.
    static let imageHeight = custom("Image-Height")
}
