/// The hardware an ``Interpreter`` runs its model on: LiteRT's hardware accelerators.
///
/// Set it on ``Interpreter/Options/accelerator``. The names are LiteRT's own (`Accelerator.cpu`
/// and `.gpu` in its Swift and Kotlin APIs, `HardwareAccelerator.GPU` in Python).
///
/// - ``cpu``: XNNPACK on the CPU, the default: outputs bit-exact with Python's interpreter.
/// - ``gpu``: LiteRT's GPU accelerator (`libLiteRtWebGpuAccelerator.so`, ML Drift on WebGPU
///   over Vulkan on Linux). Operators the GPU cannot run fall back to the CPU (XNNPACK), so a
///   model always compiles where a GPU is usable; ``Interpreter/isFullyAccelerated`` says whether
///   every operator ran on the GPU. Creating the interpreter throws
///   ``InterpreterError/failedToCreateInterpreter(reason:)`` naming what is missing (the
///   accelerator library, the Vulkan loader, a Vulkan device) when no GPU is usable.
/// - ``auto``: the GPU when one is usable, else the CPU;
///   ``Interpreter/acceleratorFallbackReason`` says why it fell back.
///
/// The GPU computes float models in float32 by default (``GPUPrecision``); quantized models
/// run dequantized, so their scores can differ from the CPU's integer arithmetic by much more
/// than a float model's (`docs/gpu.md` gives the measured bounds): prefer float models on the
/// GPU.
public enum Accelerator: String, CaseIterable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The CPU, with XNNPACK.
    case cpu
    /// The GPU, with the CPU for the operators the GPU cannot run.
    case gpu
    /// The GPU when one is usable, else the CPU.
    case auto

    /// The name, as the command line spells it (`cpu`, `gpu`, `auto`).
    public var description: String { rawValue }
}

/// The arithmetic the GPU computes in (``Interpreter/Options/gpuPrecision``).
///
/// TensorFlowLiteSwift's GPU delegates call the choice `isPrecisionLossAllowed` (off by
/// default); LiteRT calls it the delegate precision.
public enum GPUPrecision: String, CaseIterable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// Float32 throughout: the float MobileNetV2's scores within 0.001 of the CPU's here.
    case fp32
    /// Half precision where the GPU has it (LiteRT's default): faster on most GPUs; the float
    /// MobileNetV2's scores within about 0.01 of the CPU's.
    case fp16

    /// The name, as the command line spells it.
    public var description: String { rawValue }
}

/// Why the GPU cannot be used in this process: what is missing and how to install it.
///
/// ``Interpreter`` puts ``description`` in the error it throws for ``Accelerator/gpu`` and in
/// ``Interpreter/acceleratorFallbackReason`` for ``Accelerator/auto``.
public struct GPUUnavailable: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// What is missing, in one sentence, with what to install.
    public let description: String

    /// Creates the reason.
    ///
    /// - Parameter description: What is missing, with what to install.
    public init(_ description: String) {
        self.description = description
    }
}
