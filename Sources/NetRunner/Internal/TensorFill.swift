// Writing resized pixels into an input tensor through per-channel lookup tables.
//
// Invariants: `pixels` is rgb24 (3 channels) or gray8 (1 channel) with exactly as many
// channels as the tables describe; `destination` holds width * height * channels elements
// of the table's element type. Each table has 256 entries per tensor channel, already
// ordered as the tensor's channels (so BGR is handled when the tables are built).

import NetRunnerImage

enum TensorFill {
    /// Writes `pixels` through `tables` (256 entries per channel) into `destination`.
    static func fill<Element>(
        _ pixels: PixelBuffer, channels: Int, order: ImagePreprocessing.ChannelOrder, tables: [Element],
        into destination: UnsafeMutableRawBufferPointer
    ) {
        let width = pixels.width
        let height = pixels.height
        let rowBytes = pixels.bytesPerRow
        let output = destination.bindMemory(to: Element.self)
        precondition(output.count >= width * height * channels, "The input tensor is smaller than the image.")
        precondition(tables.count == 256 * channels, "One 256-entry table per channel is needed.")
        tables.withUnsafeBufferPointer { table in
            pixels.withUnsafeBytes { source in
                var out = 0
                if channels == 1 {
                    for y in 0..<height {
                        let row = y * rowBytes
                        for x in 0..<width {
                            output[out] = table[Int(source[row + x])]
                            out += 1
                        }
                    }
                    return
                }
                // rgb24 source; the tensor's channel c reads source channel `first + c * step`.
                let (first, step) = order == .rgb ? (0, 1) : (2, -1)
                for y in 0..<height {
                    var index = y * rowBytes
                    for _ in 0..<width {
                        output[out] = table[Int(source[index + first])]
                        output[out + 1] = table[256 + Int(source[index + first + step])]
                        output[out + 2] = table[512 + Int(source[index + first + 2 * step])]
                        out += 3
                        index += 3
                    }
                }
            }
        }
    }
}
