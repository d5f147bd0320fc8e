// Copying a small image into a larger one of the same format, zeroing the border.
//
// Invariants: `placement` lies inside `destination` and has `source`'s size; both buffers
// have the same pixel format; rows are copied with their own bytesPerRow.

extension PixelBuffer {
    /// Writes `source` at `placement` in `destination` and sets every other byte to 0 (a
    /// letterbox's black border).
    ///
    /// - Parameters:
    ///   - source: The image to place.
    ///   - placement: Where it goes; it must lie inside `destination` and have `source`'s size.
    ///   - destination: The image written, of `source`'s pixel format.
    /// - Complexity: O(destination's size).
    package static func pad(_ source: PixelBuffer, at placement: PixelRect, into destination: inout PixelBuffer) {
        precondition(source.format == destination.format, "Padding needs one pixel format.")
        precondition(
            placement.x >= 0 && placement.y >= 0 && placement.x + source.width <= destination.width
                && placement.y + source.height <= destination.height && placement.size == source.size,
            "The placement must lie inside the destination.")
        let pixelBytes = source.format.bytesPerPixel
        let sourceRow = source.bytesPerRow
        let rowBytes = source.width * pixelBytes
        let destinationRow = destination.bytesPerRow
        source.withUnsafeBytes { input in
            destination.withUnsafeMutableBytes { output in
                guard let outputBase = output.baseAddress else { return }
                outputBase.initializeMemory(as: UInt8.self, repeating: 0, count: output.count)
                guard let inputBase = input.baseAddress else { return }
                for y in 0..<source.height {
                    let target = outputBase + (placement.y + y) * destinationRow + placement.x * pixelBytes
                    target.copyMemory(from: inputBase + y * sourceRow, byteCount: rowBytes)
                }
            }
        }
    }
}
