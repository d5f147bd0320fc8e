// Invariants: `raw` is a valid LiteRT environment from `init` until `deinit`, which
// destroys it exactly once. The shared instances live for the whole process; the C string of
// the GPU environment's runtime folder is never freed (the environment may keep the pointer).

internal import CLiteRT
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Owns one LiteRT environment (accelerator registry, logger settings).
///
/// Two are shared per process: the CPU one (only the CPU accelerator registered, so nothing
/// warns about accelerators that cannot load) and, created the first time a GPU is asked for,
/// the GPU one (CPU and GPU registered, with the runtime's folder as the place LiteRT loads its
/// GPU accelerator library from).
///
/// Lifetime: outlives every model and compiled model created in it; they keep it alive.
// Sendable: both stored properties are immutable after init, and LiteRT allows models to
// be created and compiled in one environment from several threads.
final class EnvironmentHandle: @unchecked Sendable {
    let raw: NRLiteRtEnvironment
    let api: UnsafePointer<NRLiteRtAPI>
    /// Whether the GPU accelerator was asked for in this environment.
    let registersGPU: Bool

    /// The process-wide CPU environment, created on first use.
    static func shared() throws(InterpreterError) -> EnvironmentHandle {
        try sharedResult.get()
    }

    /// The process-wide environment with the GPU accelerator registered, created on first use.
    ///
    /// - Throws: ``GPUUnavailable`` when the accelerator library or the Vulkan loader is
    ///   missing (checked before LiteRT is asked, so the reason is ours and exact);
    ///   ``InterpreterError`` when the runtime itself cannot be loaded.
    static func sharedGPU() throws -> EnvironmentHandle {
        try sharedGPUResult.get()
    }

    /// The name of LiteRT's GPU accelerator library for Linux, found beside `libLiteRt.so`.
    static let gpuAcceleratorLibrary = "libLiteRtWebGpuAccelerator.so"

    private static let sharedResult: Result<EnvironmentHandle, InterpreterError> = {
        do {
            return .success(try EnvironmentHandle(gpuFolder: nil))
        } catch let error as InterpreterError {
            return .failure(error)
        } catch {
            return .failure(.tensorFlowLiteError("\(error)"))
        }
    }()

    private static let sharedGPUResult: Result<EnvironmentHandle, any Error> = {
        do {
            let api = try LiteRT.api()
            _ = api
            guard let folder = nr_litert_loaded_folder().map({ String(cString: $0) }) else {
                throw GPUUnavailable(
                    "the folder of the loaded LiteRT runtime could not be told, so its GPU "
                        + "accelerator library cannot be found; load libLiteRt.so by its path (\(Runtime.environmentVariable))"
                )
            }
            let library = folder + "/" + gpuAcceleratorLibrary
            if access(library, R_OK) != 0 {
                throw GPUUnavailable(
                    "LiteRT's GPU accelerator \(gpuAcceleratorLibrary) is not beside libLiteRt.so in \(folder); "
                        + "`\(Runtime.installCommand)` installs both")
            }
            var message = [CChar](repeating: 0, count: 512)
            if nr_vulkan_loader_open(&message, message.count) == 0 {
                throw GPUUnavailable(
                    "the Vulkan loader libvulkan.so.1 is missing (\(Runtime.cString(message))); install Debian's "
                        + "libvulkan1 and your GPU's Vulkan driver (docs/gpu.md)")
            }
            return .success(try EnvironmentHandle(gpuFolder: folder))
        } catch {
            return .failure(error)
        }
    }()

    private init(gpuFolder: String?) throws {
        let api = try LiteRT.api()
        var options = [NRLiteRtEnvOption](repeating: NRLiteRtEnvOption(), count: gpuFolder == nil ? 2 : 3)
        // The CPU environment registers only the CPU accelerator: GPU/NPU ones warn when they
        // cannot load.
        options[0].tag = Int32(NRLiteRtEnvOptionAutoRegisterAccelerators)
        options[0].value.type = 2
        options[0].value.int_value =
            Int64(NRLiteRtHwAcceleratorCpu) | (gpuFolder == nil ? 0 : Int64(NRLiteRtHwAcceleratorGpu))
        // Keep LiteRT's own logger at warnings; TFLite's INFO lines are captured instead.
        options[1].tag = Int32(NRLiteRtEnvOptionMinLoggerSeverity)
        options[1].value.type = 2
        options[1].value.int_value = 2
        if let gpuFolder {
            // Where LiteRT's GPU registry dlopens the accelerator from (it has no rpath).
            // Never freed: the environment lives as long as the process.
            options[2].tag = Int32(NRLiteRtEnvOptionRuntimeLibraryDir)
            options[2].value.type = 8
            options[2].value.str_value = UnsafePointer(strdup(gpuFolder))
        }
        self.raw = try RuntimeLog.created(by: "LiteRtCreateEnvironment", verbose: false) {
            api.pointee.CreateEnvironment(Int32(options.count), options, &$0)
        }
        self.api = api
        self.registersGPU = gpuFolder != nil
    }

    deinit { api.pointee.DestroyEnvironment(raw) }
}

/// What this process has learnt about its GPU: once a compile found no usable Vulkan device,
/// later `auto` interpreters go straight to the CPU instead of asking again (each try costs the
/// GPU's whole start-up).
enum GPUVerdict {
    private static let known = Mutex<GPUUnavailable?>(nil)

    /// The reason the GPU was found unusable, if it was.
    static var unavailable: GPUUnavailable? { known.withLock { $0 } }

    /// Records that the GPU is unusable in this process.
    static func record(_ reason: GPUUnavailable) {
        known.withLock { if $0 == nil { $0 = reason } }
    }
}
