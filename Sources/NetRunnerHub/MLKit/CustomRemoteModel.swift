/// A model hosted on a hub, named as ML Kit names one: `CustomRemoteModel(name: "flowers")`,
/// with NetRunner's references: `flowers@7` (a version), `flowers@production` (an alias),
/// `flowers@sha256:<hex>` (exact bytes); without one, the newest version.
public struct CustomRemoteModel: Hashable, Sendable {
    /// The model's name on the hub.
    public let name: String
    /// `latest`, a version number, an alias or `sha256:<hex>`.
    public let reference: String

    /// A remote model by name (`flowers` or `flowers@production`).
    public init(name: String) {
        if let at = name.firstIndex(of: "@") {
            self.name = String(name[..<at])
            let reference = String(name[name.index(after: at)...])
            self.reference = reference.isEmpty ? "latest" : reference
        } else {
            self.name = name
            self.reference = "latest"
        }
    }

    /// A remote model by name and reference.
    public init(name: String, reference: String) {
        self.name = name
        self.reference = reference
    }

    /// Parses `hub:NAME[@REF]`, as `--model` takes it.
    ///
    /// - Parameter text: The text.
    /// - Returns: The model, or `nil` if the text does not start with `hub:` or names no model
    ///   (`hub:@7`).
    public static func parse(_ text: String) -> CustomRemoteModel? {
        guard text.hasPrefix("hub:"), text.count > 4 else { return nil }
        let model = CustomRemoteModel(name: String(text.dropFirst(4)))
        return model.name.isEmpty ? nil : model
    }
}
