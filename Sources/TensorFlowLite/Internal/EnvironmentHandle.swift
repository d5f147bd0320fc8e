// Invariants: `raw` is a valid LiteRT environment from `init` until `deinit`, which
// destroys it exactly once. The shared instance lives for the whole process.

internal import CLiteRT

/// Owns one LiteRT environment (accelerator registry, logger settings).
///
/// Lifetime: outlives every model and compiled model created in it; they keep it alive.
// Sendable: both stored properties are immutable after init, and LiteRT allows models to
// be created and compiled in one environment from several threads.
final class EnvironmentHandle: @unchecked Sendable {
    let raw: NRLiteRtEnvironment
    let api: UnsafePointer<NRLiteRtAPI>

    /// The process-wide environment, created on first use with the CPU accelerator only.
    static func shared() throws(InterpreterError) -> EnvironmentHandle {
        try sharedResult.get()
    }

    private static let sharedResult: Result<EnvironmentHandle, InterpreterError> = {
        do {
            return .success(try EnvironmentHandle())
        } catch let error as InterpreterError {
            return .failure(error)
        } catch {
            return .failure(.tensorFlowLiteError("\(error)"))
        }
    }()

    private init() throws {
        let api = try LiteRT.api()
        var options = [NRLiteRtEnvOption](repeating: NRLiteRtEnvOption(), count: 2)
        // Register only the CPU accelerator: GPU/NPU ones cannot load here and warn.
        options[0].tag = Int32(NRLiteRtEnvOptionAutoRegisterAccelerators)
        options[0].value.type = 2
        options[0].value.int_value = Int64(NRLiteRtHwAcceleratorCpu)
        // Keep LiteRT's own logger at warnings; TFLite's INFO lines are captured instead.
        options[1].tag = Int32(NRLiteRtEnvOptionMinLoggerSeverity)
        options[1].value.type = 2
        options[1].value.int_value = 2
        var environment: NRLiteRtEnvironment?
        let (result, log) = RuntimeLog.capturing(verbose: false) {
            try check(
                api.pointee.CreateEnvironment(Int32(options.count), options, &environment), "LiteRtCreateEnvironment")
        }
        if case .failure(var error as LiteRTCallError) = result {
            error.runtimeLog = log
            throw error
        }
        guard let environment else {
            throw LiteRTCallError(function: "LiteRtCreateEnvironment", status: .runtimeFailure, runtimeLog: log)
        }
        self.raw = environment
        self.api = api
    }

    deinit { api.pointee.DestroyEnvironment(raw) }
}
