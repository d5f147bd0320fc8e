/// TensorFlowLiteSwift's GPU delegate on Apple's Metal, so iOS code compiles here unchanged.
///
/// Metal is Apple hardware: an ``Interpreter`` given this delegate throws
/// ``InterpreterError/failedToCreateInterpreter(reason:)`` saying so. Code that can run
/// without it should create the interpreter without delegates on Linux:
///
///     #if canImport(Metal)
///     let delegates: [any Delegate] = [MetalDelegate()]
///     #else
///     let delegates: [any Delegate] = []
///     #endif
public final class MetalDelegate: Delegate {
    /// The options of the Metal delegate, with TensorFlowLiteSwift's names and defaults.
    public struct Options: Equatable, Hashable, Sendable {
        /// Whether the GPU may compute in lower precision than float32.
        public var isPrecisionLossAllowed = false
        /// How the CPU waits for the GPU.
        public var waitType: ThreadWaitType = .passive
        /// Whether quantized models run on the GPU.
        public var isQuantizationEnabled = true

        /// Creates the default options.
        public init() {}
    }

    /// How the CPU waits for GPU work, as TensorFlowLiteSwift names the choices.
    public enum ThreadWaitType: Equatable, Hashable, Sendable {
        /// No wait.
        case none
        /// Sleep until the GPU is done.
        case passive
        /// Spin, then sleep.
        case active
        /// Spin.
        case aggressive
    }

    /// The options the delegate was created with.
    public let options: Options

    /// Creates the delegate (an interpreter given it throws: there is no Metal here).
    ///
    /// - Parameter options: The options.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// Why this delegate cannot run here.
    public var unavailableReason: String {
        "MetalDelegate needs Apple's Metal GPU; on Linux LiteRT runs the model on the CPU with XNNPACK "
            + "(create the interpreter without delegates)"
    }
}
