/// One published version of a model on a hub, as `GET /v1/models/{name}/versions/{version}`
/// gives it: immutable once published (its digest never changes).
public struct HubVersion: Codable, Equatable, Sendable {
    /// The model's name on the hub.
    public var name: String
    /// The version number, from 1 in order of publishing, never reused.
    public var version: Int
    /// The SHA-256 of the published file (the zipped bundle or the `.tflite`), hex.
    public var sha256: String
    /// The file's size in bytes.
    public var size: Int
    /// `zip` (a zipped bundle) or `tflite`.
    public var format: String
    /// The task it runs as: `classification` or `detection`.
    public var task: String
    /// The id in its description (`model.json`), or the file's name.
    public var modelID: String
    /// A description for people: the model's name from `model.json` or its TFLite metadata.
    public var description: String
    /// When it was published (ISO 8601, UTC).
    public var createdAt: String
    /// Who published it (the name of their key).
    public var createdBy: String

    /// Creates a version record.
    public init(
        name: String, version: Int, sha256: String, size: Int, format: String, task: String, modelID: String,
        description: String, createdAt: String, createdBy: String
    ) {
        self.name = name
        self.version = version
        self.sha256 = sha256
        self.size = size
        self.format = format
        self.task = task
        self.modelID = modelID
        self.description = description
        self.createdAt = createdAt
        self.createdBy = createdBy
    }

    enum CodingKeys: String, CodingKey {
        case name, version, sha256, size, format, task, description
        case modelID = "model_id"
        case createdAt = "created_at"
        case createdBy = "created_by"
    }
}
