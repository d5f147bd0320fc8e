import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// Issue 54, finding 7, fuzzed: progressive JPEGs with their scan script mutated.
///
/// The files: Pillow's progressive JPEGs and the crafted files of
/// tools/trial/make_scan_filter_cases.py); the mutations: component ids of the
/// frame and the scans, spectral ranges and approximation bits, scans dropped or repeated, an
/// end of image planted, bits flipped, the file cut. Each is decoded at 1/8 reading the needed scans
/// and reading every scan. Where the full read decodes, the filtered read gives the same pixels
/// byte for byte (it leaves scans out only where that changes nothing, else it reads the file
/// whole); where the full read refuses, the filtered read refuses too or decodes (a left-out
/// scan whose entropy-coded data is corrupt, which only decoding it would find, as
/// ``ProgressiveScans/needed`` says).
///
/// The corpus is seeded: `#index` names the same bytes every run.
@Suite("Fuzzing the progressive scan filter")
struct ScanFilterFuzzTests {
    static let originals =
        ProgressiveScanTests.variants.map { "Tests/Fixtures/ImageReference/variants/\($0).jpg" }
        + ["repeated_id", "chroma_dc_only_eoi", "chroma_never_refined", "dropped_scan_eoi"].map {
            "Tests/Fixtures/Hostile/scan_filter/\($0).jpg"
        }

    /// The positions of a JPEG's markers: (code, offset of the 0xFF), up to the first EOI.
    static func markers(_ bytes: [UInt8]) -> [(code: UInt8, at: Int, end: Int)] {
        var found: [(UInt8, Int, Int)] = []
        var at = 2
        while at + 4 <= bytes.count, bytes[at] == 0xFF, found.count < 64 {
            let code = bytes[at + 1]
            if code == 0xD9 { break }
            var end = at + 2 + (Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]))
            guard end <= bytes.count else { break }
            if code == 0xDA {
                while end + 1 < bytes.count,
                    !(bytes[end] == 0xFF && bytes[end + 1] != 0 && !(0xD0...0xD7).contains(bytes[end + 1]))
                {
                    end += 1
                }
            }
            found.append((code, at, end))
            at = end
        }
        return found
    }

    static let mutations = [
        "scan header byte", "frame component id", "drop a scan", "repeat a scan", "plant an EOI", "bit flips",
        "cut",
    ]

    /// Mutates `bytes`; returns the mutation's index in ``mutations``.
    static func mutate(_ bytes: inout [UInt8], using random: inout SeededGenerator) -> Int {
        let found = markers(bytes)
        let scans = found.filter { $0.code == 0xDA }
        let kind = Int.random(in: 0..<mutations.count, using: &random)
        switch kind {
        case 0:
            // A component id, Ss, Se or Ah/Al of one scan.
            guard let scan = scans.randomElement(using: &random) else { break }
            let count = Int(bytes[scan.at + 4])
            let header = scan.at + 5 + 2 * count + 3
            let position = Int.random(in: (scan.at + 5)..<min(header, bytes.count), using: &random)
            bytes[position] = DecoderFuzzTests.pick(
                [0, 1, 2, 3, 4, 13, 14, 63, 64, 0x11, 0xE0, 0xFF, bytes[position] &+ 1, bytes[position] &- 1],
                using: &random)
        case 1:
            guard let frame = found.first(where: { $0.code == 0xC2 }), frame.end - frame.at >= 13 else { break }
            let components = Int(bytes[frame.at + 9])
            let which = Int.random(in: 0..<max(components, 1), using: &random)
            let position = min(frame.at + 10 + 3 * which, bytes.count - 1)
            bytes[position] = DecoderFuzzTests.pick([1, 2, 3, 4, 0, 0xFF], using: &random)
        case 2:
            guard let scan = scans.randomElement(using: &random) else { break }
            bytes.removeSubrange(scan.at..<scan.end)
        case 3:
            guard let scan = scans.randomElement(using: &random) else { break }
            bytes.insert(contentsOf: bytes[scan.at..<scan.end], at: scan.end)
        case 4:
            let position = Int.random(in: 2..<bytes.count - 1, using: &random)
            bytes.replaceSubrange(position..<position + 2, with: [0xFF, 0xD9])
        case 5:
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let bit = UInt8(1 << Int.random(in: 0..<8, using: &random))
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= bit
            }
        default:
            bytes = Array(bytes.prefix(Int.random(in: bytes.count / 4..<bytes.count, using: &random)))
        }
        return kind
    }

    /// A decode at 1/8 reading `scans`: its scale, size and pixels, or the refusal.
    static func decode(_ bytes: [UInt8], scans: ProgressiveScans) -> Result<DecodedImage, ImageError> {
        var options = DecodingOptions(pixelFormat: .rgb24, minimumSize: PixelSize(width: 1, height: 1))
        options.scalesByPowersOfTwo = true
        options.progressiveScans = scans
        return Result { () throws(ImageError) in try ImageDecoder.decode(data: Data(bytes), options: options) }
    }

    @Test("400 mutated progressive JPEGs at 1/8: the needed scans give the full read's pixels, or it refuses")
    func mutatedScripts() throws {
        let files = try Self.originals.map { try [UInt8](Fixtures.data($0)) }
        var random = SeededGenerator(seed: 0x5343_414E)
        var outcomes: [String: Int] = [:]
        var kinds = [Int](repeating: 0, count: Self.mutations.count)
        let count = 400
        for index in 0..<count {
            var bytes = files[Int.random(in: 0..<files.count, using: &random)]
            let kind = Self.mutate(&bytes, using: &random)
            kinds[kind] += 1
            switch (Self.decode(bytes, scans: .all), Self.decode(bytes, scans: .needed)) {
            case (.success(let all), .success(let needed)):
                #expect(needed.scaleNumerator == all.scaleNumerator, "#\(index) \(Self.mutations[kind])")
                #expect(needed.pixels.size == all.pixels.size, "#\(index) \(Self.mutations[kind])")
                #expect(
                    needed.pixels.packedBytes == all.pixels.packedBytes,
                    "#\(index) \(Self.mutations[kind]): \(ByteDifference(needed.pixels.packedBytes, all.pixels.packedBytes))"
                )
                outcomes["same pixels", default: 0] += 1
            case (.success, .failure(let error)):
                Issue.record("#\(index) \(Self.mutations[kind]): the full read decodes, the filtered refuses: \(error)")
            case (.failure, .failure):
                outcomes["both refuse", default: 0] += 1
            case (.failure, .success):
                outcomes["decoded where the full read refuses", default: 0] += 1
            }
        }
        let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let mutated = zip(Self.mutations, kinds).map { "\($0) \($1)" }.joined(separator: ", ")
        print("Scan filter fuzz: \(count) files (\(mutated)): \(summary)")
        #expect(kinds.allSatisfy { $0 > 0 })
        #expect(outcomes["same pixels", default: 0] >= count / 10, "\(summary)")
        #expect(outcomes["both refuse", default: 0] >= count / 20, "\(summary)")
    }
}
