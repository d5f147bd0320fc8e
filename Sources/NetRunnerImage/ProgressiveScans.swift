/// Which scans of a progressive JPEG a decode at a DCT scale reads.
///
/// A progressive JPEG is a series of scans, each carrying some of every block's coefficients
/// (or more bits of them), and Huffman-decoding them is most of its decode time. A scaled inverse
/// DCT reads fewer coefficients, so some scans need not be read at all.
public enum ProgressiveScans: String, Sendable, Hashable, Codable {
    /// Every scan, as libjpeg reads a file.
    case all
    /// Only the scans that carry a coefficient the scaled inverse DCT reads, and the pixels are
    /// those of a decode of every scan. libjpeg-turbo's 1/8 scale reads only each block's DC
    /// coefficient, so a photo at 1/8 reads its DC scans (and a 4:2:0 file's chroma, which is
    /// scaled by 2/8): 3-5 times faster on photos of 3-12 MP. Its 1/4 and 1/2 scales read
    /// coefficients up to the block's highest frequencies, so there every scan is read. Block
    /// smoothing is as a read of every scan has it, and files where leaving scans out could
    /// change a pixel or a refusal are read whole: a repeated component id, block smoothing
    /// that would guess the DC, a left-out scan cut short by the end of the data or by an end
    /// of image with bytes after it. A left-out scan cut short by a marker with nothing else
    /// wrong cannot be told apart without decoding it: such a file decodes where a read of
    /// every scan refuses it.
    case needed
    /// Only the scans that carry a coefficient of the block's low-frequency corner that the
    /// scale keeps (1x1 at 1/8, 2x2 at 1/4, 4x4 at 1/2), and of refinement scans only those
    /// that refine what was kept. The pixels differ from a decode of every scan by 0.3-1.3 levels
    /// on average at 1/4 (the finest detail and the lowest bits of some coefficients are missing),
    /// and the decode is about 3 times faster there. What `--fast-decoding` reads.
    case lowFrequencies
}
