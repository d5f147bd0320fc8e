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
