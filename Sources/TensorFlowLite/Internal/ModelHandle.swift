// Invariants: `raw` is a valid LiteRT model built from `bytes`, which stay allocated and
// unchanged until `deinit` destroys the model (exactly once) and then releases them.

internal import CLiteRT

/// Owns one LiteRT model and the verified bytes it was built from.
///
/// Lifetime: keeps the environment and the model bytes alive; compiled models keep it alive.
final class ModelHandle {
    let raw: NRLiteRtModel
    let environment: EnvironmentHandle
    /// The model file's bytes; LiteRT reads them for as long as the model exists.
    let bytes: AlignedMemory

    /// Builds a model from bytes.
    ///
    /// LiteRT verifies the flatbuffer before accepting it.
    init(bytes: AlignedMemory, environment: EnvironmentHandle, verbose: Bool) throws {
        let api = environment.api
        self.raw = try RuntimeLog.created(by: "LiteRtCreateModelFromBuffer", verbose: verbose) {
            api.pointee.CreateModelFromBuffer(environment.raw, bytes.base, bytes.count, &$0)
        }
        self.environment = environment
        self.bytes = bytes
    }

    deinit { environment.api.pointee.DestroyModel(raw) }
}
