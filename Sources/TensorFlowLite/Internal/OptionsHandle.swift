// Invariants: `raw` is valid from `init` until `deinit` destroys it exactly once. The
// XNNPACK opaque option added in `init` is owned by `raw` (AddOpaqueOptions transfers it),
// and its payload is freed by LiteRT through the `free` deleter.

internal import CLiteRT

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Owns one LiteRT compilation options object: the accelerators, XNNPACK settings.
///
/// Lifetime: only needed while a compiled model is created; may be released afterwards.
final class OptionsHandle {
    let raw: NRLiteRtOptions
    private let api: UnsafePointer<NRLiteRtAPI>

    /// Options that run on the CPU with XNNPACK and `threads` threads, and on the GPU first
    /// when `gpu` is set (the operators it cannot run stay on the CPU).
    init(api: UnsafePointer<NRLiteRtAPI>, threads: Int, gpu: Bool = false, gpuPrecision: GPUPrecision = .fp32) throws {
        var options: NRLiteRtOptions?
        try check(api.pointee.CreateOptions(&options), "LiteRtCreateOptions")
        guard let options else { throw LiteRTCallError(function: "LiteRtCreateOptions", status: .runtimeFailure) }
        self.raw = options
        self.api = api
        try check(
            api.pointee.SetOptionsHardwareAccelerators(
                options, Int32(NRLiteRtHwAcceleratorCpu) | (gpu ? Int32(NRLiteRtHwAcceleratorGpu) : 0)),
            "LiteRtSetOptionsHardwareAccelerators")
        // The CPU options helpers are not exported by the 2.3.0 library: the "xnnpack"
        // opaque option is a TOML string, read by the CPU accelerator.
        try addTOML("xnnpack", "num_threads = \(max(1, threads))\nkernel_mode = \"delegate\"\n")
        if gpu {
            // The GPU accelerator's options, also TOML (LiteRT's LiteRtDelegatePrecision: 0 the
            // default, half precision where the GPU has it; 2 float32).
            try addTOML("gpu_options", "precision = \(gpuPrecision == .fp32 ? 2 : 0)\n")
        }
    }

    /// Adds an opaque option `identifier` whose payload is the TOML text `toml` (owned by the
    /// options from then on, freed by LiteRT).
    private func addTOML(_ identifier: String, _ toml: String) throws {
        guard let payload = strdup(toml) else {
            throw LiteRTCallError(function: "strdup", status: .memoryAllocationFailure)
        }
        var opaque: NRLiteRtOpaqueOptions?
        do {
            try check(api.pointee.CreateOpaqueOptions(identifier, payload, free, &opaque), "LiteRtCreateOpaqueOptions")
        } catch {
            free(payload)
            throw error
        }
        guard let opaque else {
            free(payload)
            throw LiteRTCallError(function: "LiteRtCreateOpaqueOptions", status: .runtimeFailure)
        }
        do {
            try check(api.pointee.AddOpaqueOptions(raw, opaque), "LiteRtAddOpaqueOptions")
        } catch {
            api.pointee.DestroyOpaqueOptions(opaque)
            throw error
        }
    }

    deinit { api.pointee.DestroyOptions(raw) }
}
