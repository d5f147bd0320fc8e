extension ImageTask {
    /// What a model does: the name a task is registered under (see ``VisionTaskDefinition``).
    ///
    /// An open set: the library registers ``classification`` and ``detection``; a new task
    /// declares its own (`static let segmentation = ImageTask.Kind("segmentation")`) and
    /// registers its definition with ``VisionTaskRegistry/register(_:)``. The raw value is the
    /// name JSON, results lines and messages use.
    public struct Kind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        /// The task's name (`classification`).
        public let rawValue: String

        /// The kind of this name.
        ///
        /// - Parameter rawValue: The task's name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The kind of this name.
        ///
        /// - Parameter name: The task's name.
        public init(_ name: String) {
            self.rawValue = name
        }

        /// It names what the image shows (one output of class scores).
        public static let classification = Kind("classification")
        /// It finds objects and their boxes.
        public static let detection = Kind("detection")

        /// The task's name.
        public var description: String { rawValue }

        /// Decodes a task's name; a name no task is registered under is an error.
        ///
        /// - Parameter decoder: The decoder.
        /// - Throws: `DecodingError` for a name no task is registered under.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            let name = try container.decode(String.self)
            guard VisionTaskRegistry.definition(for: Kind(name)) != nil else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "no task named \(name) is registered")
            }
            self.init(name)
        }

        /// Encodes the task's name.
        ///
        /// - Parameter encoder: The encoder.
        /// - Throws: The encoder's errors.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }
}
