import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// Thousands of mutated copies of real photos in every format, decoded in this process: each
/// must decode or throw an `ImageError`, never trap, hang or read out of bounds (CI runs this
/// under AddressSanitizer too). A trap takes the whole test run down, which is the point.
///
/// The corpus is deterministic (a seeded generator per format), so `#index` names the same
/// bytes every time. To find the input behind a crash, set `NETRUNNER_FUZZ_CURRENT` to a file
/// path: each input is written there before it is decoded. The originals, each format's files
/// and the positions of their length fields, are in DecoderFuzzTests+Originals.swift.
@Suite("Fuzzing the decoders with mutated photos")
struct DecoderFuzzTests {
    /// A field of a header that holds a length, size or offset.
    struct Field {
        let offset: Int
        let width: Int  // bytes: 2 or 4
        let bigEndian: Bool
    }

    /// One file to mutate, with the positions of its length and size fields.
    struct Original {
        let name: String
        let bytes: [UInt8]
        let fields: [Field]
    }

    enum Format: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case jpeg, png, bmp, pnm, webp, gif, tiff, heif, avif

        var testDescription: String { rawValue }

        /// Mutations per run: 49,000 in all, about 48 s of CPU in a debug build (most mutated
        /// files fail within their first bytes; HEVC and AV1 decodes in their children cost
        /// most), some 3x that under AddressSanitizer, which tries every one; `make test` the
        /// first quarter (``FuzzShare``).
        var count: Int { FuzzShare.count(fullCount) }

        private var fullCount: Int {
            switch self {
            case .jpeg: 6000
            case .png: 6000
            case .bmp: 12000
            case .pnm: 12000
            case .webp, .gif, .tiff: 3000
            case .heif, .avif: 1000
            }
        }

        var seed: UInt64 {
            switch self {
            case .jpeg: 0x4A50_4547
            case .png: 0x504E_47
            case .bmp: 0x424D_50
            case .pnm: 0x504E_4D
            case .webp: 0x5745_4250
            case .gif: 0x4749_46
            case .tiff: 0x5449_4646
            case .heif: 0x4845_4946
            case .avif: 0x4156_4946
            }
        }
    }

    // MARK: Mutations

    /// Replaces one header number of a Netpbm file with an extreme one.
    static func editNumber(_ bytes: inout [UInt8], using random: inout SeededGenerator) {
        var numbers: [Range<Int>] = []
        var position = 2
        while position < min(bytes.count, 64) && numbers.count < 3 {
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                let start = position
                while position < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                    position += 1
                }
                numbers.append(start..<position)
            } else if bytes[position] == UInt8(ascii: "#") {
                while position < bytes.count && bytes[position] != 0x0A { position += 1 }
            } else {
                position += 1
            }
        }
        guard let range = numbers.randomElement(using: &random) else { return }
        let values = [
            "0", "1", "2", "255", "256", "65535", "65536", "999999999", "1000000000", "4294967296",
            "18446744073709551617", "-1", "", String(Int.random(in: 0...100_000, using: &random)),
        ]
        bytes.replaceSubrange(range, with: Array(values[Int.random(in: 0..<values.count, using: &random)].utf8))
    }

    /// One of `values`, chosen by `random`.
    static func pick<Value>(_ values: [Value], using random: inout SeededGenerator) -> Value {
        values[Int.random(in: 0..<values.count, using: &random)]
    }

    /// Sets a length or size field to an extreme or nearby value.
    static func editField(_ field: Field, _ bytes: inout [UInt8], using random: inout SeededGenerator) {
        guard field.offset + field.width <= bytes.count else { return }
        let maximum = field.width == 2 ? 0xFFFF : 0xFFFF_FFFF
        var old = 0
        for index in 0..<field.width {
            let byte = Int(bytes[field.offset + (field.bigEndian ? index : field.width - 1 - index)])
            old = old << 8 | byte
        }
        let choices = [
            0, 1, 2, maximum, maximum / 2, maximum / 2 + 1, maximum - 1, Int.random(in: 0...maximum, using: &random),
            (old + Int.random(in: -16...16, using: &random)) & maximum, (old * 2) & maximum, old / 2,
        ]
        let value = choices[Int.random(in: 0..<choices.count, using: &random)]
        for index in 0..<field.width {
            let byte = UInt8(truncatingIfNeeded: value >> (8 * (field.width - 1 - index)))
            bytes[field.offset + (field.bigEndian ? index : field.width - 1 - index)] = byte
        }
    }

    /// The mutation kinds, for the summary.
    static let mutations = ["truncate", "bit flips", "byte sets", "header byte sets", "length fields", "splice"]

    /// Mutates `original` in place; returns the mutation's index in ``mutations``.
    static func mutate(
        _ bytes: inout [UInt8], _ original: Original, format: Format, using random: inout SeededGenerator
    ) -> Int {
        let kind = Int.random(in: 0..<mutations.count, using: &random)
        switch kind {
        case 0:
            bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
        case 1:
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(
                    1 << Int.random(in: 0..<8, using: &random))
            }
        case 2:
            for _ in 0..<Int.random(in: 1...16, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = Self.pick(
                    [0, 0xFF, 0x7F, 0x80, UInt8.random(in: 0...255, using: &random)], using: &random)
            }
        case 3:
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<min(bytes.count, 512), using: &random)] = UInt8.random(
                    in: 0...255, using: &random)
            }
        case 4:
            if format == .pnm {
                editNumber(&bytes, using: &random)
            } else if let field = original.fields.randomElement(using: &random) {
                editField(field, &bytes, using: &random)
            }
        default:
            // Repeat or drop a slice (duplicated or missing segments, chunks and rows).
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let length = min(Int.random(in: 1...512, using: &random), bytes.count - start)
            if Bool.random(using: &random) {
                bytes.insert(contentsOf: bytes[start..<(start + length)], at: start)
            } else {
                bytes.removeSubrange(start..<(start + length))
            }
        }
        return kind
    }

    /// Recomputes the CRC of every whole chunk but IDAT, so that mutations reach libpng's chunk
    /// parsers instead of all ending at the CRC check (libpng inflates IDAT data before it
    /// reaches the chunk's CRC, so mutated image data is decoded either way).
    static func fixCRCs(_ bytes: inout [UInt8]) {
        var position = 8
        while position + 12 <= bytes.count {
            let length = bytes[position..<(position + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard length <= bytes.count - position - 12 else { return }
            if bytes[(position + 4)..<(position + 8)].elementsEqual("IDAT".utf8) == false {
                let crc = SyntheticImages.crc32(Array(bytes[(position + 4)..<(position + 8 + length)]))
                bytes.replaceSubrange(
                    (position + 8 + length)..<(position + 12 + length), with: SyntheticImages.be32(Int(crc)))
            }
            position += 12 + length
        }
    }

    /// The outcome's name: `decoded` or the error's case.
    static func outcome(_ error: ImageError) -> String {
        let text = String(describing: Mirror(reflecting: error).children.first?.label ?? "\(error)")
        return text
    }

    @Test(
        "Thousands of mutated photos per format decode or throw ImageError, never trap",
        .timeLimit(.minutes(3)), arguments: Format.allCases)
    func mutatedPhotos(format: Format) throws {
        let originals = Self.originals(format)
        #expect(originals.count >= 4, "the \(format) originals are missing")
        guard !originals.isEmpty else { return }
        for original in originals {
            #expect(throws: Never.self, "\(original.name) must decode unmutated") {
                try ImageDecoder.decode(data: Data(original.bytes))
            }
        }
        let currentFile = ProcessInfo.processInfo.environment["NETRUNNER_FUZZ_CURRENT"].map { "\($0).\(format)" }
        var random = SeededGenerator(seed: format.seed)
        var options = DecodingOptions(maximumPixelCount: 4_000_000)
        var outcomes: [String: Int] = [:]
        let pool = format == .heif || format == .avif ? DecoderIsolation(.init(children: 1)) : nil
        var mutationCounts = [Int](repeating: 0, count: Self.mutations.count)
        let clock = ContinuousClock()
        let start = clock.now
        for index in 0..<format.count {
            let original = originals[Int.random(in: 0..<originals.count, using: &random)]
            var bytes = original.bytes
            mutationCounts[Self.mutate(&bytes, original, format: format, using: &random)] += 1
            if format == .png && index % 2 == 0 { Self.fixCRCs(&bytes) }
            options.pixelFormat = [nil, .rgb24, .gray8, .bgra32][index % 4]
            // WebP: 1/2; a progressive JPEG at 1/8 or 1/4 reads only some of its scans.
            options.minimumSize =
                switch index % 5 {
                case 0: PixelSize(width: 40, height: 40)
                case 1 where format == .jpeg: PixelSize(width: 1, height: 1)
                default: nil
                }
            options.progressiveScans = [.needed, .lowFrequencies, .all][index % 3]
            if let currentFile { try Data(bytes).write(to: URL(fileURLWithPath: currentFile)) }
            do {
                // HEIC and AVIF go to a decoder process, as serve and the command line send them:
                // libheif 1.19 corrupts its heap on some mutated grids (a tile that decodes to
                // another size than its ispe), which would take this test process down.
                let data = Data(bytes)
                let image =
                    if let pool, let sniffed = ImageFormat.sniff(data.prefix(12)),
                        pool.configuration.formats.contains(sniffed)
                    {
                        try pool.decode(data: data, format: sniffed, options: options, source: "image data")
                    } else {
                        try ImageDecoder.decode(data: data, options: options)
                    }
                #expect(image.pixels.width * image.pixels.height <= 4_000_000, "#\(index)")
                outcomes["decoded", default: 0] += 1
            } catch {
                outcomes[Self.outcome(error), default: 0] += 1
            }
        }
        let elapsed = clock.now - start
        let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let kinds = zip(Self.mutations, mutationCounts).map { "\($0) \($1)" }.joined(separator: ", ")
        print("Fuzz \(format): \(format.count) mutated files (\(kinds)) in \(elapsed): \(summary)")
        #expect(mutationCounts.allSatisfy { $0 > 0 })
        #expect(outcomes.values.reduce(0, +) == format.count)
        // Both outcomes must be common, or the corpus proves little.
        #expect(outcomes["decoded", default: 0] >= format.count / 20, "\(summary)")
        #expect(outcomes["decoded", default: 0] <= format.count * 19 / 20, "\(summary)")
    }
}
