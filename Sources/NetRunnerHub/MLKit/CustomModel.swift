/// A downloaded, verified model (ML Kit's `CustomModel`): where it is and what it is.
public struct CustomModel: Equatable, Sendable {
    /// The model's name on the hub.
    public var name: String
    /// The version it is.
    public var version: Int
    /// Its size in bytes.
    public var size: Int
    /// The local file (a zipped bundle or a `.tflite`), verified; load it with
    /// `LoadedModel(.path(path))`.
    public var path: String
    /// Its SHA-256.
    public var hash: String
    /// Why this is the verified local copy and not what the hub says now (the hub could not be
    /// reached, or the download conditions did not hold), as ML Kit's local fallback is
    /// explicit; `nil` when the hub answered.
    public var fallbackReason: String? = nil

    /// Whether the two are the same verified file of the same model and version (how it was
    /// come by, ``fallbackReason``, aside).
    public static func == (left: CustomModel, right: CustomModel) -> Bool {
        left.name == right.name && left.version == right.version && left.size == right.size
            && left.path == right.path && left.hash == right.hash
    }

    /// The same model, used as the local fallback for `reason`.
    func asFallback(_ reason: String) -> CustomModel {
        var model = self
        model.fallbackReason = reason
        return model
    }
}
