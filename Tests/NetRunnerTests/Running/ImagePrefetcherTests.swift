import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@Suite("ImagePrefetcher")
struct ImagePrefetcherTests {
    static let photos = ["chelsea.png", "coffee.jpg"].map { Fixtures.path("Tests/Fixtures/Photos/test/" + $0) }

    static func preprocessing(normalization: ImagePreprocessing.Normalization?) -> ImagePreprocessing {
        ImagePreprocessing(
            inputIndex: 0, size: PixelSize(width: 8, height: 8), channels: 3, tensorType: .float32,
            quantization: nil, normalization: normalization, channelOrder: .rgb, cropping: .centerSquare,
            resizeMethod: .bilinear)
    }

    @Test("Images come back in order, decoded and prepared, with their timings")
    func prepared() throws {
        let prefetcher = ImagePrefetcher(
            paths: Self.photos, preprocessing: Self.preprocessing(normalization: .zeroToOne), lookahead: 1)
        var paths: [String] = []
        while let item = prefetcher.next() {
            paths.append(item.path)
            #expect(try item.prepared.get().input.count == 8 * 8 * 3 * 4)
            #expect(try item.image.get().pixels.size.width > 8)
        }
        #expect(paths == Self.photos)
    }

    @Test("A preprocessing that cannot be applied reaches every item as its own error, not as a decoding error")
    func tensorizerError() throws {
        let broken = Self.preprocessing(normalization: ImagePreprocessing.Normalization(mean: [0], std: [0]))
        let prefetcher = ImagePrefetcher(paths: Self.photos, preprocessing: broken)
        var count = 0
        while let item = prefetcher.next() {
            count += 1
            #expect(throws: NetRunnerError.self) { try item.prepared.get() }
            #expect(throws: Never.self) { try item.image.get() }
            if case .failure(let error) = item.prepared { #expect(!"\(error)".contains("empty")) }
        }
        #expect(count == 2)
        let unprepared = ImagePrefetcher(paths: Self.photos)
        let first = try #require(unprepared.next())
        #expect(
            throws: NetRunnerError.invalidOption(
                name: "preprocessing", reason: "the prefetcher was given none, so it prepares no input")
        ) {
            try first.prepared.get()
        }
    }
}

/// Several decoders and batches (issue 26: on the GPU one interpreter runs, every core decodes,
/// and a classifier runs several images per invoke).
@Suite("Decoders side by side, batches of images")
struct BatchedRunTests {
    static let folder = Fixtures.path("Tests/Fixtures/Photos/test")
    static var photos: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        // Each photo several times, so that decoders finish out of order.
        return (0..<3).flatMap { _ in names.sorted().map { folder + "/" + $0 } }
    }

    @Test("Four decoders give every image once, in order, each prepared as one decoder prepares it", arguments: [1, 4])
    func decodersKeepOrder(decoders: Int) throws {
        let classifier = try ImageClassifier(modelPath: Fixtures.path(Fixtures.MobileNet.uint8))
        let reference = ImagePrefetcher(
            paths: Self.photos, options: classifier.decodingOptions, preprocessing: classifier.preprocessing)
        let parallel = ImagePrefetcher(
            paths: Self.photos, options: classifier.decodingOptions, preprocessing: classifier.preprocessing,
            lookahead: 2, decoders: decoders)
        var count = 0
        while let expected = reference.next() {
            let item = try #require(parallel.next())
            #expect(item.path == expected.path)
            #expect(try item.prepared.get().input == expected.prepared.get().input)
            count += 1
        }
        #expect(parallel.next() == nil)
        #expect(count == Self.photos.count)
    }

    @Test(
        "A batch of 4 equals the same images one by one, bit for bit, on the CPU (float and uint8 models)",
        arguments: [Fixtures.MobileNet.float32, Fixtures.MobileNet.uint8])
    func batchEqualsSingles(model: String) throws {
        let classifier = try ImageClassifier(modelPath: Fixtures.path(model))
        let prefetcher = ImagePrefetcher(
            paths: Array(Self.photos.prefix(4)), options: classifier.decodingOptions,
            preprocessing: classifier.preprocessing)
        var batch: [(image: PreparedImage, decodeTime: Duration)] = []
        while let item = prefetcher.next() { batch.append((try item.prepared.get(), item.decodeTime)) }
        #expect(batch.count == 4)
        let together = try classifier.classify(batch: batch)
        let alone = try batch.map { try classifier.run(.prepared($0.image, decodeTime: $0.decodeTime)) }
        #expect(together.map(\.categories) == alone.map(\.categories))
        #expect(together.allSatisfy { !$0.categories.isEmpty })
        // A smaller batch fills the batch with copies (their answers dropped), a larger one runs
        // in pieces, a lone image alone: the same answers.
        let three = try classifier.classify(batch: Array(batch.prefix(3)))
        #expect(three.map(\.categories) == alone.prefix(3).map(\.categories))
        let six = try classifier.classify(batch: batch + batch.prefix(2))
        #expect(six.map(\.categories) == (alone + alone.prefix(2)).map(\.categories))
        let one = try classifier.classify(batch: Array(batch.prefix(1)))
        #expect(one.map(\.categories) == alone.prefix(1).map(\.categories))
        // Which time is which: each image's share, and the batch's whole time said once with its size.
        let whole = try #require(together.first?.batch)
        #expect(whole.size == 4 && together.allSatisfy { $0.batch == whole })
        #expect(together.allSatisfy { abs($0.inferenceMilliseconds * 4 - whole.inferenceMilliseconds) < 0.01 })
        #expect(three.first?.batch?.size == 3 && one.first?.batch == nil && alone.allSatisfy { $0.batch == nil })
        // A results line writes both and reads them back.
        let line = try JSONEncoder().encode(ResultsLine(image: "a.jpg", answer: .classification(together[0])))
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.contains("\"batch_size\":4") && text.contains("\"batch_inference_latency\":"))
        let back = try JSONDecoder().decode(ResultsLine.self, from: line)
        #expect(back.answer?.batch?.size == 4)
    }

    /// Issue 55, item 6: a server's decoding is a value bound around its work, not a static;
    /// the prefetcher's threads, which a task's binding does not reach, take the caller's.
    @Test("The decoders' threads decode in the environment bound where the prefetcher was made")
    func boundEnvironment() throws {
        let pool = DecoderIsolation(.init(children: 1))
        let heic = Fixtures.path("Tests/Fixtures/Formats/heic_plain.heic")
        let here = try ImageDecoder.decode(contentsOf: heic)
        let items = ImageDecoder.$environment.withValue(DecodingEnvironment(isolation: pool)) {
            let prefetcher = ImagePrefetcher(paths: [heic, Self.photos[1], heic], decoders: 2)
            return (0..<3).compactMap { _ in prefetcher.next() }
        }
        #expect(items.count == 3)
        let (first, last) = (try items[0].image.get(), try items[2].image.get())
        #expect(first == here && last == here)
        // Both HEICs in the pool's child, the JPEG here; unbound, nothing more goes to it.
        #expect(pool.statistics.decodes == 2, "\(pool.statistics)")
        let unbound = try ImagePrefetcher(paths: [heic]).next()?.image.get()
        #expect(unbound == here)
        #expect(pool.statistics.decodes == 2, "\(pool.statistics)")
    }
}
