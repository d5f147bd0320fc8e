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
/// - ``auto``: the GPU when one is usable and the model is a float model, else the CPU;
///   ``Interpreter/acceleratorFallbackReason`` says why it stayed on the CPU. A quantized model
///   (integer inputs or outputs) stays on the CPU: its integer arithmetic is exact there, and the
///   GPU runs it dequantized.
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
    /// The GPU when one is usable and the model is a float model, else the CPU.
    case auto

    /// The name, as the command line spells it (`cpu`, `gpu`, `auto`).
    public var description: String { rawValue }
}
