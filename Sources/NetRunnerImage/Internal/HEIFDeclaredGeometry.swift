// What a HEIF or AVIF file declares of its primary image, read by the parent before a decoder
// child sees the file: the `ispe` size, whether an `irot` turns it a quarter, whether a `clap`
// crops it. Bounds-checked ISO BMFF boxes (meta > pitm, iprp > ipco, ipma); nothing is
// allocated from a size in the file. `nil` when the file does not say (the child then decides,
// and its answer is only held to the bounds).

import FoundationEssentials

struct HEIFDeclaredGeometry: Equatable {
    /// The primary item's `ispe`: its coded size, before any transformation.
    var coded: PixelSize
    /// Whether its rotations add up to a quarter or three quarters (width and height swap).
    var turned: Bool
    /// Whether a clean aperture crops it.
    var cropped: Bool

    /// The size a decode shows before any crop.
    var upright: PixelSize { turned ? PixelSize(width: coded.height, height: coded.width) : coded }

    /// The most boxes looked at, past which the file declares nothing.
    private static let boxLimit = 4096

    init(coded: PixelSize, turned: Bool, cropped: Bool) {
        self.coded = coded
        self.turned = turned
        self.cropped = cropped
    }

    init?(_ data: Data) {
        let bytes = [UInt8](data.prefix(1 << 20))
        guard let meta = Self.boxes(bytes, 0..<bytes.count).first(where: { $0.type == "meta" }),
            meta.body.count >= 4
        else { return nil }
        let inMeta = Self.boxes(bytes, (meta.body.lowerBound + 4)..<meta.body.upperBound)
        guard let pitm = inMeta.first(where: { $0.type == "pitm" }), pitm.body.count >= 6,
            let iprp = inMeta.first(where: { $0.type == "iprp" })
        else { return nil }
        let primary =
            bytes[pitm.body.lowerBound] == 0
            ? Self.integer(bytes, pitm.body.lowerBound + 4, 2) : Self.integer(bytes, pitm.body.lowerBound + 4, 4)
        let inProperties = Self.boxes(bytes, iprp.body)
        guard let primary, let ipco = inProperties.first(where: { $0.type == "ipco" }) else { return nil }
        let properties = Self.boxes(bytes, ipco.body)
        var associated: [Int] = []
        for ipma in inProperties where ipma.type == "ipma" {
            associated += Self.associations(bytes, ipma.body, of: primary)
        }
        var size: PixelSize?
        var quarters = 0
        var cropped = false
        for index in associated where index >= 1 && index <= properties.count {
            let property = properties[index - 1]
            switch property.type {
            case "ispe":
                guard property.body.count >= 12, size == nil,
                    let width = Self.integer(bytes, property.body.lowerBound + 4, 4),
                    let height = Self.integer(bytes, property.body.lowerBound + 8, 4)
                else { continue }
                size = PixelSize(width: width, height: height)
            case "irot":
                if let angle = Self.integer(bytes, property.body.lowerBound, 1) { quarters += angle & 3 }
            case "clap": cropped = true
            default: break
            }
        }
        guard let size, size.width > 0, size.height > 0 else { return nil }
        self.init(coded: size, turned: quarters % 2 == 1, cropped: cropped)
    }

    private struct Box {
        var type: String
        var body: Range<Int>
    }

    /// The boxes laid end to end in `range`; stops at the first that does not fit.
    private static func boxes(_ bytes: [UInt8], _ range: Range<Int>) -> [Box] {
        var found: [Box] = []
        var start = range.lowerBound
        while start + 8 <= range.upperBound, found.count < boxLimit {
            guard var size = integer(bytes, start, 4) else { break }
            var header = 8
            if size == 1 {
                guard start + 16 <= range.upperBound, let large = integer(bytes, start + 8, 8) else { break }
                size = large
                header = 16
            } else if size == 0 {
                size = range.upperBound - start
            }
            guard size >= header, size <= range.upperBound - start else { break }
            let type = String(decoding: bytes[(start + 4)..<(start + 8)], as: UTF8.self)
            found.append(Box(type: type, body: (start + header)..<(start + size)))
            start += size
        }
        return found
    }

    /// The property indexes `ipma` associates with `item`.
    private static func associations(_ bytes: [UInt8], _ body: Range<Int>, of item: Int) -> [Int] {
        guard body.count >= 8, let count = integer(bytes, body.lowerBound + 4, 4) else { return [] }
        let version = bytes[body.lowerBound]
        let wide = bytes[body.lowerBound + 3] & 1 == 1
        let idSize = version < 1 ? 2 : 4
        var at = body.lowerBound + 8
        for _ in 0..<min(count, boxLimit) {
            guard let id = integer(bytes, at, idSize), at + idSize < body.upperBound else { return [] }
            let entries = Int(bytes[at + idSize])
            at += idSize + 1
            var indexes: [Int] = []
            for _ in 0..<entries {
                guard let value = integer(bytes, at, wide ? 2 : 1), at + (wide ? 2 : 1) <= body.upperBound else {
                    return []
                }
                indexes.append(value & (wide ? 0x7FFF : 0x7F))
                at += wide ? 2 : 1
            }
            if id == item { return indexes }
        }
        return []
    }

    /// The big-endian integer of `count` bytes at `offset`, `nil` past the end or past `Int`.
    private static func integer(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int? {
        guard offset >= 0, count <= 8, offset <= bytes.count - count else { return nil }
        var value: UInt64 = 0
        for byte in bytes[offset..<(offset + count)] { value = value << 8 | UInt64(byte) }
        return value <= UInt64(Int32.max) * 4 ? Int(value) : nil
    }
}
