// Fixed-point resampling weights for one axis, and the two separable passes that use them
// (ImageResizer runs them in Pillow's order: `runsVerticalFirst`).
// Where the CPU has AVX2, the passes run CImageCodecs' vector loops (resample.c), which give the
// same bytes (integer sums); the loops here are the portable ones.
//
// Invariants: for every output index i, `0 <= starts[i]`, `counts[i] >= 1`,
// `starts[i] + counts[i] <= origin + length` (inside the source region; for a mirrored table,
// inside the region's mirror image `mirrorLength - origin - length ..< mirrorLength - origin`) and
// `counts[i] <= taps`; `weights` holds `outputSize * taps` values, row i at `i * taps`. The
// passes read source rows/columns only at `starts[i] ..< starts[i] + counts[i]`, so they stay
// inside the region the caller clamped to the image.

/// The weights of one resampling axis, computed once and reused for every frame of the same
/// geometry.
internal import CImageCodecs
import Synchronization

struct ResampleCoefficients {
    /// Whether the passes may use the AVX2 loops (tests turn them off to compare).
    static let usesVectorLoops = Atomic<Bool>(true)

    /// What the table was computed for.
    struct Key: Hashable {
        var method: ResizeMethod
        var origin: Int
        var length: Int
        var outputSize: Int
        /// The length of an axis read backwards (an EXIF orientation's flip), or 0.
        ///
        /// Source index `i` is then read at `mirrorLength - 1 - i`.
        var mirrorLength = 0
    }

    static let precisionBits: Int32 = 22
    static let half: Int32 = 1 << (precisionBits - 1)

    let key: Key
    let taps: Int
    /// First source index (absolute, origin included) of each output sample.
    let starts: [Int]
    /// Number of source samples of each output sample.
    let counts: [Int]
    /// `outputSize * taps` weights in units of 2^-22.
    let weights: [Int32]
    /// The weights of the AVX2 horizontal loop (resample.c), four taps per step.
    ///
    /// Per output sample `quads` pairs of 16 int16, each weight split as `high * 2048 + low`, the high parts' vector then
    /// the low parts', taps 0-1 in the first 8 values and 2-3 in the last 8, each tap's part
    /// once per channel side by side with its partner's (3 channels: t0 t1 t0 t1 t0 t1 0 0; 4
    /// channels: t0 t1 four times). Empty when a weight lies outside 0...2^22 (the loop's sums
    /// would overflow): the portable loop runs then.
    let quadWeights3: [Int16]
    let quadWeights4: [Int16]
    /// `(taps + 3) / 4`.
    let quads: Int

    init(_ key: Key) {
        precondition(key.length > 0 && key.outputSize > 0, "Resampling needs a non-empty source and output.")
        self.key = key
        let length = key.length
        let outputSize = key.outputSize
        let scale = Double(length) / Double(outputSize)
        var taps: Int
        var starts = [Int](repeating: 0, count: outputSize)
        var counts = [Int](repeating: 0, count: outputSize)
        var real: [Double]
        switch key.method {
        case .bilinear:
            // Pillow's precompute_coeffs with its triangle filter (support 1), reproduced step
            // by step so the double arithmetic rounds the same way.
            let filterScale = max(scale, 1)
            let support = 1.0 * filterScale
            taps = Int(support.rounded(.up)) * 2 + 1
            real = [Double](repeating: 0, count: outputSize * taps)
            let inverse = 1.0 / filterScale
            for index in 0..<outputSize {
                let center = 0.0 + (Double(index) + 0.5) * scale
                let low = min(max(Int(center - support + 0.5), 0), length - 1)
                let high = min(Int(center + support + 0.5), length)
                var total = 0.0
                for tap in 0..<max(high - low, 0) {
                    var x = (Double(tap + low) - center + 0.5) * inverse
                    if x < 0 { x = -x }
                    let weight = x < 1 ? 1 - x : 0
                    real[index * taps + tap] = weight
                    total += weight
                }
                if total != 0 {
                    for tap in 0..<max(high - low, 0) { real[index * taps + tap] /= total }
                }
                starts[index] = low
                counts[index] = max(high - low, 1)
            }
        case .area:
            taps = Int(scale.rounded(.up)) + 2
            real = [Double](repeating: 0, count: outputSize * taps)
            for index in 0..<outputSize {
                let from = Double(index) * scale
                let to = Double(index + 1) * scale
                let low = min(Int(from.rounded(.down)), length - 1)
                let high = max(min(Int(to.rounded(.up)), length), low + 1)
                var total = 0.0
                for tap in 0..<(high - low) {
                    let x = Double(low + tap)
                    let weight = max(min(x + 1, to) - max(x, from), 0)
                    real[index * taps + tap] = weight
                    total += weight
                }
                if total > 0 {
                    for tap in 0..<(high - low) { real[index * taps + tap] /= total }
                } else {
                    real[index * taps] = 1
                }
                starts[index] = low
                counts[index] = high - low
            }
        case .nearest:
            taps = 1
            real = [Double](repeating: 1, count: outputSize)
            for index in 0..<outputSize {
                starts[index] = min(Int((Double(index) + 0.5) * scale), length - 1)
                counts[index] = 1
            }
        }
        let unit = Double(1 << Self.precisionBits)
        var weights = real.map { $0 < 0 ? Int32(-0.5 + $0 * unit) : Int32(0.5 + $0 * unit) }
        starts = starts.map { $0 + key.origin }
        if key.mirrorLength > 0 {
            // The same window read backwards: the same products, so the same integer sum.
            for index in 0..<outputSize {
                starts[index] = key.mirrorLength - starts[index] - counts[index]
                weights[(index * taps)..<(index * taps + counts[index])].reverse()
            }
        }
        self.weights = weights
        self.taps = taps
        self.starts = starts
        self.counts = counts
        let quads = (taps + 3) / 4
        self.quads = quads
        let limit = Int32(1) << Self.precisionBits
        if weights.allSatisfy({ (0...limit).contains($0) }) {
            var three = [Int16](repeating: 0, count: outputSize * quads * 32)
            var four = three
            for index in 0..<outputSize {
                for tap in 0..<counts[index] {
                    let weight = weights[index * taps + tap]
                    for part in 0..<2 {
                        let value = Int16(part == 0 ? weight >> 11 : weight & 2047)
                        // The quad's vector of this part, then the tap's half of it and its slot.
                        let base = ((index * quads + tap / 4) * 2 + part) * 16 + (tap % 4 / 2) * 8 + tap % 2
                        for channel in 0..<3 { three[base + 2 * channel] = value }
                        for channel in 0..<4 { four[base + 2 * channel] = value }
                    }
                }
            }
            self.quadWeights3 = three
            self.quadWeights4 = four
        } else {
            self.quadWeights3 = []
            self.quadWeights4 = []
        }
    }

    /// Whether Pillow resamples a geometry's columns before its rows: when the height shrinks,
    /// and by more than twice as many pixels as the width does (a width that grows shrinks by
    /// a negative count).
    ///
    /// Pillow 13's `ImagingResampleInner` (python-pillow/Pillow#9549) picks the order so; older
    /// Pillows always ran the rows first. The intermediate is rounded to 8 bits, so the order
    /// changes the bytes (1 input value in 8 for a photo of 400x600 stretched to 224x224). The
    /// rule was read off Pillow 13.0.0 by resizing random pixels in one call and in either
    /// order of two one-axis calls: it held on 600 random geometries, and `PillowShapeSweepTests`
    /// checks it on photos.
    ///
    /// - Parameters:
    ///   - horizontal: The rows' table (source width to output width).
    ///   - vertical: The columns' table (source height to output height).
    /// - Returns: `true` to run the vertical pass first.
    static func runsVerticalFirst(_ horizontal: Key, _ vertical: Key) -> Bool {
        let shrinksHeight = vertical.length - vertical.outputSize
        return shrinksHeight > 0 && shrinksHeight > 2 * (horizontal.length - horizontal.outputSize)
    }

    /// Whether the table maps the source one to one (same length, every weight exactly 1).
    var isIdentity: Bool {
        key.mirrorLength == 0 && key.length == key.outputSize
            && (0..<key.outputSize).allSatisfy {
                counts[$0] >= 1 && starts[$0] == key.origin + $0 && weights[$0 * taps] == 1 << Self.precisionBits
            }
    }

    /// The first source index used.
    var firstSource: Int { starts.min() ?? key.origin }

    /// One past the last source index used.
    var endSource: Int { (0..<key.outputSize).map { starts[$0] + counts[$0] }.max() ?? key.origin }

    @inline(__always)
    static func clip(_ value: Int32) -> UInt8 {
        let shifted = value >> precisionBits
        return shifted < 0 ? 0 : shifted > 255 ? 255 : UInt8(truncatingIfNeeded: shifted)
    }

    /// Resamples columns: `rowCount` rows starting at source row `firstRow`, each `channels`
    /// bytes per pixel, into packed rows of `destination`.
    ///
    /// `readableEnd` is the end of the source's memory: the vector loop reads a few bytes past
    /// a window where that stays below it.
    func horizontalPass(
        source: UnsafeRawPointer, sourceStride: Int, firstRow: Int, rowCount: Int, channels: Int,
        destination: UnsafeMutableRawPointer, destinationStride: Int, readableEnd: UnsafeRawPointer
    ) {
        let outputSize = key.outputSize
        let taps = self.taps
        let quadWeights = channels == 3 ? quadWeights3 : quadWeights4
        if (channels == 3 || channels == 4) && !quadWeights.isEmpty && Self.usesVectorLoops.load(ordering: .relaxed) {
            let done = starts.withUnsafeBufferPointer { starts in
                counts.withUnsafeBufferPointer { counts in
                    weights.withUnsafeBufferPointer { weights in
                        quadWeights.withUnsafeBufferPointer { quadWeights in
                            nr_resample_horizontal(
                                source.assumingMemoryBound(to: UInt8.self), sourceStride, firstRow, rowCount,
                                Int32(channels), starts.baseAddress, counts.baseAddress, weights.baseAddress, taps,
                                quadWeights.baseAddress, quads, outputSize,
                                destination.assumingMemoryBound(to: UInt8.self), destinationStride,
                                readableEnd.assumingMemoryBound(to: UInt8.self))
                        }
                    }
                }
            }
            if done != 0 { return }
        }
        starts.withUnsafeBufferPointer { starts in
            counts.withUnsafeBufferPointer { counts in
                weights.withUnsafeBufferPointer { weights in
                    guard let allWeights = weights.baseAddress else { return }
                    for row in 0..<rowCount {
                        let input = (source + (firstRow + row) * sourceStride).assumingMemoryBound(to: UInt8.self)
                        let output = (destination + row * destinationStride).assumingMemoryBound(to: UInt8.self)
                        for index in 0..<outputSize {
                            let start = starts[index]
                            let count = counts[index]
                            let weight = allWeights + index * taps
                            switch channels {
                            case 4:
                                var sum = SIMD4<Int32>(repeating: Self.half)
                                var pixel = input + start * 4
                                for tap in 0..<count {
                                    let value = SIMD4<Int32>(
                                        Int32(pixel[0]), Int32(pixel[1]), Int32(pixel[2]), Int32(pixel[3]))
                                    sum &+= value &* weight[tap]
                                    pixel += 4
                                }
                                let out = output + index * 4
                                out[0] = Self.clip(sum[0])
                                out[1] = Self.clip(sum[1])
                                out[2] = Self.clip(sum[2])
                                out[3] = Self.clip(sum[3])
                            case 3:
                                var sum0 = Self.half
                                var sum1 = Self.half
                                var sum2 = Self.half
                                var pixel = input + start * 3
                                for tap in 0..<count {
                                    let w = weight[tap]
                                    sum0 &+= Int32(pixel[0]) &* w
                                    sum1 &+= Int32(pixel[1]) &* w
                                    sum2 &+= Int32(pixel[2]) &* w
                                    pixel += 3
                                }
                                let out = output + index * 3
                                out[0] = Self.clip(sum0)
                                out[1] = Self.clip(sum1)
                                out[2] = Self.clip(sum2)
                            default:
                                for channel in 0..<channels {
                                    var sum = Self.half
                                    for tap in 0..<count {
                                        sum &+= Int32(input[(start + tap) * channels + channel]) &* weight[tap]
                                    }
                                    output[index * channels + channel] = Self.clip(sum)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Resamples rows, each output row a weighted sum of whole source rows.
    ///
    /// Rows are `rowBytes` bytes of any channel layout; `source` points at source row `rowBase`.
    func verticalPass(
        source: UnsafeRawPointer, sourceStride: Int, rowBase: Int, rowBytes: Int,
        destination: UnsafeMutableRawPointer, destinationStride: Int, accumulator: UnsafeMutablePointer<Int32>
    ) {
        let taps = self.taps
        if Self.usesVectorLoops.load(ordering: .relaxed) {
            let done = starts.withUnsafeBufferPointer { starts in
                counts.withUnsafeBufferPointer { counts in
                    weights.withUnsafeBufferPointer { weights in
                        nr_resample_vertical(
                            source.assumingMemoryBound(to: UInt8.self), sourceStride, rowBase, rowBytes,
                            starts.baseAddress, counts.baseAddress, weights.baseAddress, taps, key.outputSize,
                            destination.assumingMemoryBound(to: UInt8.self), destinationStride, accumulator)
                    }
                }
            }
            if done != 0 { return }
        }
        starts.withUnsafeBufferPointer { starts in
            counts.withUnsafeBufferPointer { counts in
                weights.withUnsafeBufferPointer { weights in
                    guard let allWeights = weights.baseAddress else { return }
                    for index in 0..<key.outputSize {
                        let start = starts[index] - rowBase
                        let weight = allWeights + index * taps
                        accumulator.update(repeating: Self.half, count: rowBytes)
                        for tap in 0..<counts[index] {
                            let w = weight[tap]
                            let input = (source + (start + tap) * sourceStride).assumingMemoryBound(to: UInt8.self)
                            for byte in 0..<rowBytes {
                                accumulator[byte] &+= Int32(input[byte]) &* w
                            }
                        }
                        let output = (destination + index * destinationStride).assumingMemoryBound(to: UInt8.self)
                        for byte in 0..<rowBytes {
                            let shifted = accumulator[byte] >> Self.precisionBits
                            output[byte] = UInt8(truncatingIfNeeded: min(max(shifted, 0), 255))
                        }
                    }
                }
            }
        }
    }
}
