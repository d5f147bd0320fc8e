public import Foundation

/// Converting between arrays of numbers and the little-endian bytes tensors hold.
public enum TensorBytes {
    /// The bytes of `values`, as a tensor of their type holds them.
    ///
    /// - Parameter values: Numbers of a fixed-size type (`Float`, `Int32`, `UInt8`, ...).
    /// - Returns: `values.count * MemoryLayout<T>.stride` bytes.
    public static func data<T: BitwiseCopyable>(_ values: [T]) -> Data {
        values.withUnsafeBytes { Data($0) }
    }

    /// The values held in `data`, read as `type`.
    ///
    /// - Parameters:
    ///   - data: Tensor bytes; their count must be a multiple of the type's stride.
    ///   - type: The element type.
    /// - Returns: The values, or `nil` when the byte count does not fit the type.
    public static func values<T: BitwiseCopyable>(_ data: Data, as type: T.Type) -> [T]? {
        guard data.count % MemoryLayout<T>.stride == 0 else { return nil }
        return [T](unsafeUninitializedCapacity: data.count / MemoryLayout<T>.stride) { buffer, count in
            let copied = data.copyBytes(to: buffer)
            count = copied / MemoryLayout<T>.stride
        }
    }
}
