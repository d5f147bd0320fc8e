/// TensorFlowLiteSwift's Core ML delegate, so iOS code compiles here unchanged.
///
/// As on an Apple device without a Neural Engine, the failable initialiser returns `nil`:
/// Core ML is not available on Linux, and code written for the seeds' examples
/// (`if let delegate = CoreMLDelegate() { ... }`) falls back to the CPU by itself.
public final class CoreMLDelegate: Delegate {
    /// The options of the Core ML delegate, with TensorFlowLiteSwift's names and defaults.
    public struct Options: Equatable, Hashable, Sendable {
        /// The devices the delegate is created on.
        public var enabledDevices: EnabledDevices = .neuralEngine
        /// The Core ML version to target (0: the newest available).
        public var coreMLVersion = 0
        /// The most partitions delegated (0: no limit).
        public var maxDelegatedPartitions = 0
        /// The fewest nodes a delegated partition has.
        public var minNodesPerPartition = 2

        /// Creates the default options.
        public init() {}
    }

    /// Which devices the Core ML delegate is created on.
    public enum EnabledDevices: Equatable, Hashable, Sendable {
        /// Only devices with a Neural Engine.
        case neuralEngine
        /// Every device.
        case all
    }

    /// The options the delegate was created with.
    public let options: Options

    /// Returns `nil`: Core ML is Apple's, and no device here has it.
    ///
    /// - Parameter options: The options.
    public init?(options: Options = Options()) {
        return nil
    }
}
