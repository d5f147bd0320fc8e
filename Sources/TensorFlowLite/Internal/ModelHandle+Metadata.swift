// Reading a model's metadata buffers through the LiteRT C API.
//
// Invariants: the pointer LiteRT returns points into the model bytes this handle owns; the
// bytes are copied into `Data` before the call returns.

internal import CLiteRT
import FoundationEssentials

extension ModelHandle {
    /// A copy of the metadata buffer stored under `key`, or `nil` when the model has none.
    func metadata(forKey key: String) -> Data? {
        var buffer: UnsafeRawPointer?
        var size = 0
        let status = environment.api.pointee.GetModelMetadata(raw, key, &buffer, &size)
        guard succeeded(status), let buffer, size > 0 else { return nil }
        return Data(bytes: buffer, count: size)
    }
}
