import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// Issue 43: a third-party decoder cannot take the server down. HEIC and AVIF decode in child
/// processes of a ``DecoderIsolation`` pool (the `netrunner` executable of this build), with the
/// same answers as in process; a child that crashes or hangs costs one decode an error.
@Suite("Decoding in child processes")
struct DecoderIsolationTests {
    static let files = [
        "Tests/Fixtures/Formats/heic_plain.heic", "Tests/Fixtures/Formats/heic_irot.heic",
        "Tests/Fixtures/Formats/heic_alpha.heic", "Tests/Fixtures/Formats/avif_plain.avif",
        "Tests/Fixtures/Hostile/heic_grid_small.heic",
    ]

    static func outcome(_ body: () throws(ImageError) -> DecodedImage) -> Result<DecodedImage, ImageError> {
        Result { () throws(ImageError) -> DecodedImage in try body() }
    }

    @Test("A child decodes every HEIC and AVIF to the in-process image, errors included")
    func sameAnswers() throws {
        let pool = DecoderIsolation(.init(children: 2))
        var cases: [(String, Data, DecodingOptions)] = []
        for file in Self.files {
            let data = try Fixtures.data(file)
            cases.append((file, data, DecodingOptions()))
            cases.append((file, data, DecodingOptions(pixelFormat: .rgb24)))
            cases.append((file, data, DecodingOptions(pixelFormat: .bgra32, maximumPixelCount: 50_000)))
            cases.append((file + " (cut)", data.prefix(data.count / 2), DecodingOptions(pixelFormat: .rgb24)))
        }
        let lying = try Fixtures.data("Tests/Fixtures/Hostile/heic_grid_lying_ispe.heic")
        cases.append(("lying", lying, DecodingOptions()))
        var retiring = 0
        for (index, (name, data, options)) in cases.enumerated() {
            let format = try #require(ImageFormat.sniff(data.prefix(12)))
            let here = Self.outcome { () throws(ImageError) in
                try ImageDecoder.decode(data: data, options: options, source: name)
            }
            let there = Self.outcome { () throws(ImageError) in
                try pool.decode(data: data, format: format, options: options, source: name)
            }
            #expect(here == there, "\(name) \(options)")
            if case .failure = there, index < cases.count - 1 { retiring += 1 }
        }
        let statistics = pool.statistics
        #expect(statistics.decodes == cases.count && statistics.crashes == 0 && statistics.timeouts == 0)
        // One caller at a time reuses one child, but none after an error (issue 54).
        #expect(statistics.childrenStarted == 1 + retiring, "\(statistics)")
    }

    /// Issue 55, item 6: where photos decode is a value bound around the work, not a static.
    @Test("A bound environment's pool takes HEIC and AVIF, its budget large photos; unbound, this process")
    func boundEnvironment() async throws {
        let pool = DecoderIsolation(.init(children: 1))
        let budget = PixelBudget(capacity: 40_000_000, threshold: 1)
        let heic = try Fixtures.data("Tests/Fixtures/Formats/heic_plain.heic")
        let jpeg = try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg")
        let here = try ImageDecoder.decode(data: heic)
        let jpegHere = try ImageDecoder.decode(data: jpeg)
        let environment = DecodingEnvironment(isolation: pool, admission: budget)
        let there = try ImageDecoder.$environment.withValue(environment) {
            (try ImageDecoder.decode(data: heic), try ImageDecoder.decode(data: jpeg))
        }
        #expect(there.0 == here && there.1 == jpegHere)
        #expect(pool.statistics.decodes == 1, "\(pool.statistics)")
        // The JPEG held its pixels of the budget (over its 1-pixel threshold) while it decoded.
        let pixels = there.1.pixels.width * there.1.pixels.height
        #expect(budget.statistics.peak >= pixels, "\(budget.statistics)")
        let ahead = try await ImageDecoder.$environment.withValue(environment) {
            try await ImageDecoder.decodeInDecoderProcess(data: heic)
        }
        #expect(ahead == here && pool.statistics.decodes == 2)
        // Unbound: the process's default, which a test process leaves in process.
        let unbound = try await ImageDecoder.decodeInDecoderProcess(data: heic)
        #expect(unbound == nil)
        #expect(pool.statistics.decodes == 2)
    }

    @Test("Concurrent decodes share the pool's children, never more than it has")
    func concurrent() async throws {
        let pool = DecoderIsolation(.init(children: 2))
        let data = try Fixtures.data("Tests/Fixtures/Formats/heic_plain.heic")
        let expected = try ImageDecoder.decode(data: data)
        let results = await withTaskGroup(of: Result<DecodedImage, ImageError>.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    Self.outcome { () throws(ImageError) in
                        try pool.decode(data: data, format: .heif, options: DecodingOptions(), source: "photo")
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { (try? $0.get()) == expected })
        #expect(pool.statistics.childrenStarted <= 2 && pool.statistics.decodes == 8)
    }

    /// What a crash inside libheif did to `serve` before (SIGSEGV, the process gone) now costs
    /// the one decode; the pool starts another child for the next.
    @Test("A child that crashes costs one decode an error naming the signal; the next decode works")
    func crash() throws {
        var configuration = DecoderIsolation.Configuration(children: 1)
        configuration.environment = ["NETRUNNER_DECODER_FAULT": "crash"]
        let crashing = DecoderIsolation(configuration)
        let data = try Fixtures.data("Tests/Fixtures/Formats/heic_plain.heic")
        for _ in 0..<2 {
            do {
                _ = try crashing.decode(data: data, format: .heif, options: DecodingOptions(), source: "photo.heic")
                Issue.record("a crashing child answered")
            } catch {
                guard case .decoderFailed(let source, let format, let reason) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(source == "photo.heic" && format == .heif && reason.contains("SIGSEGV"), "\(reason)")
            }
        }
        #expect(crashing.statistics.crashes == 2 && crashing.statistics.childrenStarted == 2)
        let healthy = DecoderIsolation(.init(children: 1))
        #expect(
            try healthy.decode(data: data, format: .heif, options: DecodingOptions(), source: "photo")
                == ImageDecoder.decode(data: data))
    }

    @Test("A child that never answers is stopped at the deadline")
    func hang() throws {
        var configuration = DecoderIsolation.Configuration(children: 1, timeout: .milliseconds(500))
        configuration.environment = ["NETRUNNER_DECODER_FAULT": "hang"]
        let pool = DecoderIsolation(configuration)
        let data = try Fixtures.data("Tests/Fixtures/Formats/heic_plain.heic")
        #expect {
            try pool.decode(data: data, format: .heif, options: DecodingOptions(), source: "photo")
        } throws: { error in
            guard case .decoderFailed(_, _, let reason) = error as? ImageError else { return false }
            return reason.contains("took longer")
        }
        #expect(pool.statistics.timeouts == 1)
    }

    @Test("A missing executable is an error, not a crash")
    func missingExecutable() throws {
        let pool = DecoderIsolation(.init(children: 1, executable: "/nonexistent/netrunner"))
        let data = try Fixtures.data("Tests/Fixtures/Formats/heic_plain.heic")
        #expect(throws: ImageError.self) {
            try pool.decode(data: data, format: .heif, options: DecodingOptions(), source: "photo")
        }
    }
}
