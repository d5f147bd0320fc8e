/// A hardware delegate that runs part of a model, in TensorFlowLiteSwift's API.
///
/// TensorFlowLiteSwift's delegates (`MetalDelegate`, `CoreMLDelegate`) wrap Apple-only
/// hardware. On Linux the LiteRT runtime runs on the CPU with XNNPACK, so no delegate type
/// is provided; the protocol exists so code that passes `delegates:` compiles. Passing a
/// non-empty array to an ``Interpreter`` throws
/// ``InterpreterError/failedToCreateInterpreter(reason:)``.
public protocol Delegate: AnyObject {}
