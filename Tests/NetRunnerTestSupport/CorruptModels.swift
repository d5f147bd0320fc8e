public import Foundation

/// One corrupted copy of a committed model, made by ``CorruptModels``.
public struct CorruptModel: Sendable, CustomStringConvertible {
    /// How a model was corrupted.
    public enum Mutation: String, Sendable, CaseIterable {
        /// 1 to 16 single bits inverted.
        case bitFlips = "bit flips"
        /// 1 to 16 bytes replaced by random values.
        case byteOverwrites = "byte overwrites"
        /// A run of 1 to 64 zero bytes written near the start of the file.
        case zeroedStart = "zeroed run near start"
        /// A run of 1 to 64 zero bytes written near the end of the file.
        case zeroedEnd = "zeroed run near end"
        /// The file cut short.
        case truncation = "truncation"
        /// A slice of another model written over, or inserted into, this one.
        case splice = "splice"
    }

    /// The position of this model in its corpus.
    public let index: Int
    /// The committed model it was made from, relative to the repository root.
    public let source: String
    /// How it was corrupted.
    public let mutation: Mutation
    /// Where and how much, for reproducing it by hand.
    public let detail: String
    /// The corrupted bytes.
    public let data: Data

    /// `#index mutation of file (detail)`.
    public var description: String {
        "#\(index) \(mutation.rawValue) of \((source as NSString).lastPathComponent) (\(detail))"
    }
}

/// A deterministic corpus of corrupted TFLite models, made from every committed model.
///
/// The same seed always gives the same models, so a failure can be reproduced from the
/// index it reports. Small synthetic models are chosen most often (88 in 100); the
/// MobileNets are used less (uint8 6, int8 5 and float32 1 in 100) because they are large.
///
///     let corpus = try CorruptModels(seed: 2024)
///     for index in 0..<600 { try run(corpus.model(at: index).data) }
public struct CorruptModels: Sendable {
    /// The small synthetic models, relative to the repository root.
    public static let smallModels = [
        Fixtures.Synthetic.multiSignature, Fixtures.Synthetic.dynamicBatch, Fixtures.Synthetic.multiIO,
        Fixtures.Synthetic.extraTypes, Fixtures.Synthetic.int16, Fixtures.Synthetic.float16Input,
        Fixtures.Synthetic.perChannelInput, Fixtures.Synthetic.stringIO,
    ]

    /// The real MobileNetV2 models, relative to the repository root.
    public static let mobileNets = [
        Fixtures.MobileNet.uint8, Fixtures.MobileNet.int8, Fixtures.MobileNet.float32,
    ]

    /// The bytes of zeroed runs and splices are placed within this many bytes of the start
    /// or the end of a file, where a flatbuffer keeps its root table, vtables and vectors.
    public static let edge = 2048

    private let seed: UInt64
    private let originals: [String: Data]

    /// Loads every committed model once.
    ///
    /// - Parameter seed: The seed all corruptions derive from.
    /// - Throws: A file system error if a committed model cannot be read.
    public init(seed: UInt64) throws {
        self.seed = seed
        var originals: [String: Data] = [:]
        for file in Self.smallModels + Self.mobileNets {
            originals[file] = try Fixtures.data(file)
        }
        self.originals = originals
    }

    /// The corrupted model at `index`; the same seed and index always give the same bytes.
    ///
    /// - Parameter index: Any non-negative number.
    /// - Returns: The corrupted model.
    public func model(at index: Int) -> CorruptModel {
        var random = SeededGenerator(seed: seed ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        let source = Self.source(&random)
        let original = originals[source] ?? Data()
        let mutation = Mutation.allCases[Int.random(in: 0..<Mutation.allCases.count, using: &random)]
        let (data, detail) = mutate(original, with: mutation, using: &random)
        return CorruptModel(index: index, source: source, mutation: mutation, detail: detail, data: data)
    }

    /// The uncorrupted bytes of a committed model, as loaded by ``init(seed:)``.
    ///
    /// - Parameter source: One of ``smallModels`` or ``mobileNets``.
    /// - Returns: The bytes, or `nil` for another file.
    public func original(_ source: String) -> Data? {
        originals[source]
    }

    private typealias Mutation = CorruptModel.Mutation

    private static func source(_ random: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<88: smallModels[Int.random(in: 0..<smallModels.count, using: &random)]
        case 88..<94: Fixtures.MobileNet.uint8
        case 94..<99: Fixtures.MobileNet.int8
        default: Fixtures.MobileNet.float32
        }
    }

    /// A position in a file of `size` bytes: near the start, near the end, or anywhere.
    private static func position(in size: Int, _ random: inout SeededGenerator) -> Int {
        let window = min(size, edge)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return Int.random(in: 0..<window, using: &random)
        case 1: return size - 1 - Int.random(in: 0..<window, using: &random)
        default: return Int.random(in: 0..<size, using: &random)
        }
    }

    private func mutate(
        _ original: Data, with mutation: Mutation, using random: inout SeededGenerator
    ) -> (Data, String) {
        var data = original
        let size = data.count
        guard size > 0 else { return (data, "empty original") }
        switch mutation {
        case .bitFlips:
            let count = Int.random(in: 1...16, using: &random)
            var positions: [String] = []
            for _ in 0..<count {
                let position = Self.position(in: size, &random)
                let bit = Int.random(in: 0..<8, using: &random)
                data[position] ^= UInt8(1 << bit)
                positions.append("\(position).\(bit)")
            }
            return (data, "bits " + positions.joined(separator: ", "))
        case .byteOverwrites:
            let count = Int.random(in: 1...16, using: &random)
            var positions: [String] = []
            for _ in 0..<count {
                let position = Self.position(in: size, &random)
                let value = UInt8.random(in: 0...255, using: &random)
                data[position] = value
                positions.append("\(position)=\(value)")
            }
            return (data, "bytes " + positions.joined(separator: ", "))
        case .zeroedStart, .zeroedEnd:
            let window = min(size, Self.edge)
            let length = min(Int.random(in: 1...64, using: &random), window)
            let offset = Int.random(in: 0...(window - length), using: &random)
            let start = mutation == .zeroedStart ? offset : size - window + offset
            data.replaceSubrange(start..<(start + length), with: Data(count: length))
            return (data, "\(length) zero bytes at \(start)")
        case .truncation:
            let length: Int
            switch Int.random(in: 0..<3, using: &random) {
            case 0: length = Int.random(in: 0..<min(size, 512), using: &random)
            case 1: length = size - 1 - Int.random(in: 0..<min(size, Self.edge), using: &random)
            default: length = Int.random(in: 0..<size, using: &random)
            }
            return (data.prefix(length), "\(length) of \(size) bytes")
        case .splice:
            let donorName = Self.smallModels[Int.random(in: 0..<Self.smallModels.count, using: &random)]
            let donor = originals[donorName] ?? Data()
            let length = min(Int.random(in: 4...512, using: &random), donor.count, size)
            let from = Int.random(in: 0...(donor.count - length), using: &random)
            let slice = donor.subdata(in: from..<(from + length))
            let to = min(Self.position(in: size, &random), size - length)
            let donorFile = (donorName as NSString).lastPathComponent
            if Bool.random(using: &random) {
                data.insert(contentsOf: slice, at: data.startIndex + to)
                return (data, "\(length) bytes of \(donorFile) at \(from) inserted at \(to)")
            }
            data.replaceSubrange(to..<(to + length), with: slice)
            return (data, "\(length) bytes of \(donorFile) at \(from) written at \(to)")
        }
    }
}
