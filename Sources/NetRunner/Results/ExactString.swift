/// Text compared byte for byte, as the file system compares names.
///
/// Swift's `String` compares by Unicode canonical equivalence, so `café.jpg` spelled in NFC
/// (`c a f é`) and in NFD (`c a f e ◌́`) are one string, while on Linux they are two files. Wherever
/// a file name is a key (resuming and retrying a results file, merging shards, thumbnails by
/// image, an album's photos), it is an `ExactString`, so two names are one key only when their
/// UTF-8 bytes are the same.
///
///     ExactString("caf\u{E9}") == ExactString("cafe\u{301}")  // false
///     "caf\u{E9}" == "cafe\u{301}"                               // true
public struct ExactString: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The text.
    public let string: String

    /// The text, to be compared by its bytes.
    public init(_ string: String) {
        self.string = string
    }

    /// The literal's text, to be compared by its bytes.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The text.
    public var description: String { string }

    /// Whether the two have the same UTF-8 bytes.
    public static func == (left: ExactString, right: ExactString) -> Bool {
        left.string.utf8.elementsEqual(right.string.utf8)
    }

    /// Hashes the UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        var text = string
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Byte order (UTF-8's order is Unicode scalar order): every name has one place.
    public static func < (left: ExactString, right: ExactString) -> Bool {
        left.string.utf8.lexicographicallyPrecedes(right.string.utf8)
    }
}
