import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunnerImage

/// Issue 54, finding 1, fuzzed: crafted HEIC and AVIF grids with their geometry mutated.
///
/// The grids: odd 4:2:0 and 4:2:2 tiles, the
/// even control, a grid whose tiles decode taller than they declare) with their geometry
/// mutated: an `ispe`'s width or height, the `grid`'s rows, columns and output size, the `iref
/// dimg`'s reference count and tile ids. Each goes to a decoder child, as serve sends it: every
/// case decodes with the size the file declares, or is refused with an `ImageError`; the test
/// process never crashes, and the pool decodes the control afterwards.
///
/// The corpus is seeded: `#index` names the same bytes every run.
@Suite("Fuzzing the HEIC and AVIF grid geometry")
struct GridGeometryFuzzTests {
    static let originals = [
        "Tests/Fixtures/Hostile/avif_grid_odd_tiles.avif", "Tests/Fixtures/Hostile/avif_grid_odd_tiles_422.avif",
        "Tests/Fixtures/Hostile/avif_grid_even_tiles.avif", "Tests/Fixtures/Hostile/heic_grid_small.heic",
        "Tests/Fixtures/Hostile/heic_grid_tile_taller.heic",
    ]

    /// An ISO BMFF box: its type and the byte ranges of the box and of its body.
    struct Box {
        let type: String
        let whole: Range<Int>
        let body: Range<Int>
    }

    /// The boxes in `range`, bounds-checked (32-bit sizes only, as the crafted files have).
    static func boxes(_ bytes: [UInt8], _ range: Range<Int>) -> [Box] {
        var found: [Box] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound, found.count < 256 {
            let size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8, size <= range.upperBound - at else { break }
            let type = String(decoding: bytes[at + 4..<at + 8], as: UTF8.self)
            found.append(Box(type: type, whole: at..<at + size, body: at + 8..<at + size))
            at += size
        }
        return found
    }

    /// The geometry fields of a grid file: (what, offset, width in bytes), all big-endian.
    static func geometryFields(_ bytes: [UInt8]) -> [(what: String, offset: Int, width: Int)] {
        var fields: [(String, Int, Int)] = []
        guard let meta = boxes(bytes, 0..<bytes.count).first(where: { $0.type == "meta" }) else { return [] }
        for box in boxes(bytes, meta.body.lowerBound + 4..<meta.body.upperBound) {
            switch box.type {
            case "iprp":
                for ipco in boxes(bytes, box.body) where ipco.type == "ipco" {
                    for ispe in boxes(bytes, ipco.body) where ispe.type == "ispe" && ispe.body.count >= 12 {
                        fields.append(("ispe width", ispe.body.lowerBound + 4, 4))
                        fields.append(("ispe height", ispe.body.lowerBound + 8, 4))
                    }
                }
            case "idat" where box.body.count >= 8:
                // The grid: version, flags, rows - 1, columns - 1, then the output size (16-bit
                // unless flags & 1).
                let start = box.body.lowerBound
                let side = bytes[start + 1] & 1 == 0 ? 2 : 4
                fields.append(("grid rows", start + 2, 1))
                fields.append(("grid columns", start + 3, 1))
                fields.append(("grid output width", start + 4, side))
                fields.append(("grid output height", start + 4 + side, side))
            case "iref" where box.body.count >= 4:
                for dimg in boxes(bytes, box.body.lowerBound + 4..<box.body.upperBound)
                where dimg.type == "dimg" && dimg.body.count >= 4 {
                    fields.append(("dimg count", dimg.body.lowerBound + 2, 2))
                    for id in stride(from: dimg.body.lowerBound + 4, to: dimg.body.upperBound - 1, by: 2) {
                        fields.append(("dimg tile id", id, 2))
                    }
                }
            default:
                break
            }
        }
        return fields
    }

    /// Sets a field to an odd side, a neighbour, an extreme or a random value.
    static func edit(
        _ field: (what: String, offset: Int, width: Int), _ bytes: inout [UInt8], using random: inout SeededGenerator
    ) {
        let maximum = field.width == 4 ? 0xFFFF_FFFF : (1 << (8 * field.width)) - 1
        let old = bytes[field.offset..<field.offset + field.width].reduce(0) { $0 << 8 | Int($1) }
        let choices = [
            0, 1, 2, 63, 64, 511, 1023, 4095, 32768, maximum, maximum - 1, old - 1, old + 1, old * 2, old / 2,
            old + Int.random(in: -16...16, using: &random), Int.random(in: 0...maximum, using: &random),
        ]
        let value = choices[Int.random(in: 0..<choices.count, using: &random)] & maximum
        for index in 0..<field.width {
            bytes[field.offset + index] = UInt8(truncatingIfNeeded: value >> (8 * (field.width - 1 - index)))
        }
    }

    /// Sets the grid's output size and its `ispe` (the one that equals the output size) to one
    /// smaller size, by up to 63 pixels a side.
    static func shrink(
        _ bytes: inout [UInt8], _ fields: [(what: String, offset: Int, width: Int)], using random: inout SeededGenerator
    ) {
        func read(_ field: (what: String, offset: Int, width: Int)) -> Int {
            bytes[field.offset..<field.offset + field.width].reduce(0) { $0 << 8 | Int($1) }
        }
        func write(_ field: (what: String, offset: Int, width: Int), _ value: Int) {
            for index in 0..<field.width {
                bytes[field.offset + index] = UInt8(truncatingIfNeeded: value >> (8 * (field.width - 1 - index)))
            }
        }
        guard let outputWidth = fields.first(where: { $0.what == "grid output width" }),
            let outputHeight = fields.first(where: { $0.what == "grid output height" })
        else { return }
        let (width, height) = (read(outputWidth), read(outputHeight))
        let ispes = fields.filter { $0.what == "ispe width" }.compactMap { ispeWidth in
            fields.first { $0.what == "ispe height" && $0.offset == ispeWidth.offset + 4 }.map { (ispeWidth, $0) }
        }
        guard let grid = ispes.first(where: { read($0.0) == width && read($0.1) == height }), width > 1, height > 1
        else { return }
        let newWidth = width - Int.random(in: 0...min(63, width - 1), using: &random)
        let newHeight = height - Int.random(in: 0...min(63, height - 1), using: &random)
        for (field, value) in [
            (outputWidth, newWidth), (outputHeight, newHeight), (grid.0, newWidth), (grid.1, newHeight),
        ] {
            write(field, value)
        }
    }

    @Test("300 grids of mutated geometry: decoded at the declared size or refused, in decoder children")
    func mutatedGrids() throws {
        let files = try Self.originals.map { try [UInt8](Fixtures.data($0)) }
        let fields = files.map(Self.geometryFields)
        for (name, found) in zip(Self.originals, fields) {
            #expect(found.count >= 8 && found.contains { $0.what == "dimg count" }, "\(name): \(found)")
        }
        let pool = DecoderIsolation(.init(children: 1))
        var random = SeededGenerator(seed: 0x4752_4944)
        var outcomes: [String: Int] = [:]
        var edited: [String: Int] = [:]
        let count = 300
        for index in 0..<count {
            let pick = Int.random(in: 0..<files.count, using: &random)
            var bytes = files[pick]
            if index % 5 == 4 {
                // A smaller grid, its descriptor and its ispe changed together (legal: the grid
                // crops its tiles), so that some mutants are whole and must decode at that size.
                Self.shrink(&bytes, fields[pick], using: &random)
                edited["grid and ispe shrunk together", default: 0] += 1
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    guard let field = fields[pick].randomElement(using: &random) else { continue }
                    Self.edit(field, &bytes, using: &random)
                    edited[field.what, default: 0] += 1
                }
            }
            let data = Data(bytes)
            let format: ImageFormat = Self.originals[pick].hasSuffix(".avif") ? .avif : .heif
            var options = DecodingOptions(maximumPixelCount: 4_000_000)
            options.pixelFormat = index % 2 == 0 ? .rgb24 : nil
            if index % 3 == 0 { options.region = .centerSquare }
            do {
                let image = try pool.decode(data: data, format: format, options: options, source: "#\(index)")
                // The size the file declares, held by the test as by the parent.
                let declared = HEIFDeclaredGeometry(data)
                if let declared, !declared.cropped {
                    #expect(image.storedSize == declared.upright, "#\(index) \(Self.originals[pick])")
                }
                #expect(image.storedSize.width * image.storedSize.height <= 4_000_000, "#\(index)")
                #expect(
                    DecoderWire.problem(with: image, format: format, options: options, declared: declared) == nil,
                    "#\(index)")
                outcomes["decoded", default: 0] += 1
            } catch {
                // decode throws ImageError only.
                outcomes[DecoderFuzzTests.outcome(error), default: 0] += 1
            }
        }
        let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("Grid geometry fuzz: \(count) files (\(edited.sorted { $0.key < $1.key })): \(summary)")
        #expect(outcomes.values.reduce(0, +) == count)
        // Most geometry edits break a grid (a descriptor and an ispe that disagree are refused, as
        // pillow-heif refuses them); a grid shrunk whole decodes unless its tiles are refused
        // (odd tiles, or tiles taller than declared): the even control's and the HEIC control's
        // (measured: 25 of 300).
        #expect(outcomes["decoded", default: 0] >= count / 30, "\(summary)")
        #expect(outcomes["decoded", default: 0] <= count * 19 / 20, "\(summary)")
        // The pool still serves: the control decodes, whole.
        let control = try pool.decode(
            data: Data(files[2]), format: .avif, options: DecodingOptions(), source: "avif_grid_even_tiles.avif")
        #expect(control.storedSize == PixelSize(width: 128, height: 128))
    }
}
