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
        var model: NRLiteRtModel?
        let api = environment.api
        let (result, log) = RuntimeLog.capturing(verbose: verbose) {
            try check(
                api.pointee.CreateModelFromBuffer(environment.raw, bytes.base, bytes.count, &model),
                "LiteRtCreateModelFromBuffer")
        }
        if verbose { RuntimeLog.forward(log) }
        if case .failure(var error as LiteRTCallError) = result {
            error.runtimeLog = log
            throw error
        }
        guard let model else {
            throw LiteRTCallError(function: "LiteRtCreateModelFromBuffer", status: .runtimeFailure, runtimeLog: log)
        }
        self.raw = model
        self.environment = environment
        self.bytes = bytes
    }

    deinit { environment.api.pointee.DestroyModel(raw) }
}
