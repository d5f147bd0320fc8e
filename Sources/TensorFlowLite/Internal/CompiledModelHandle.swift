// Invariants: `raw` is a valid compiled model from `init` until `deinit` destroys it
// exactly once; `model` (and through it the environment and the model bytes) outlives it.

internal import CLiteRT

/// Owns one LiteRT compiled model: the model prepared for the CPU with XNNPACK, or for the GPU
/// (with the CPU for what the GPU cannot run).
///
/// Lifetime: keeps `model` (hence the environment and the model bytes) alive; tensor
/// buffers keep it alive.
final class CompiledModelHandle {
    let raw: NRLiteRtCompiledModel
    let model: ModelHandle
    /// Whether the runtime's log lines go to the logger (`isErrorLoggingEnabled`).
    let verbose: Bool
    /// Whether it was compiled for the GPU.
    let usesGPU: Bool
    /// Whether every operator runs on the accelerator it was compiled for (always for the CPU).
    let isFullyAccelerated: Bool

    init(model: ModelHandle, threads: Int, gpu: Bool = false, gpuPrecision: GPUPrecision = .fp32, verbose: Bool) throws
    {
        let api = model.environment.api
        let options = try OptionsHandle(api: api, threads: threads, gpu: gpu, gpuPrecision: gpuPrecision)
        // The GPU accelerator's start-up prints to stdout too (printf): captured with stderr.
        let compiled: NRLiteRtCompiledModel = try RuntimeLog.created(
            by: "LiteRtCreateCompiledModel", verbose: verbose, standardOutput: gpu
        ) { api.pointee.CreateCompiledModel(model.environment.raw, model.raw, options.raw, &$0) }
        self.raw = compiled
        self.model = model
        self.verbose = verbose
        self.usesGPU = gpu
        var fully = true
        if gpu, !succeeded(api.pointee.CompiledModelIsFullyAccelerated(compiled, &fully)) {
            fully = false
        }
        self.isFullyAccelerated = fully
    }

    var api: UnsafePointer<NRLiteRtAPI> { model.environment.api }

    deinit { api.pointee.DestroyCompiledModel(raw) }
}
