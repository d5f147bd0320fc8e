import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// A measurement, not a test: what the decoder children's sandbox costs.
///
/// Printed when `NETRUNNER_IMAGE_BENCH=1` (tools/trial/decoder_sandbox_bench.sh runs it, with the
/// files in `NETRUNNER_SANDBOX_BENCH_FILES`, colon-separated). For each file, sandboxed children
/// against children that skip their sandbox: the median of a child's start (to its hello,
/// decoders loaded) plus one decode, and of a decode on a warm child. Asserts nothing about time.
@Suite(
    "Benchmark: decoder children with and without their sandbox",
    .enabled(if: ProcessInfo.processInfo.environment["NETRUNNER_IMAGE_BENCH"] != nil))
struct DecoderSandboxBenchmarkTests {
    static func milliseconds(_ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func text(_ milliseconds: Double) -> String { "\((milliseconds * 100).rounded() / 100)" }

    static func pool(sandboxed: Bool, decodesPerChild: Int) -> DecoderIsolation {
        var configuration = DecoderIsolation.Configuration(children: 1)
        configuration.decodesPerChild = decodesPerChild
        if !sandboxed {
            configuration.requiresSandbox = false
            configuration.environment = ["NETRUNNER_DECODER_FAULT": "skip-sandbox"]
        }
        return DecoderIsolation(configuration)
    }

    @Test("A child's start and a decode, sandboxed and not")
    func measure() throws {
        let given = ProcessInfo.processInfo.environment["NETRUNNER_SANDBOX_BENCH_FILES"].map {
            $0.split(separator: ":").map(String.init)
        }
        let files =
            given ?? [
                Fixtures.path("Tests/Fixtures/Formats/heic_plain.heic"),
                Fixtures.path("Tests/Fixtures/Grids/heic_grid.heic"),
                Fixtures.path("Tests/Fixtures/Formats/avif_plain.avif"),
            ]
        let rounds = 15
        var lines: [String] = []
        for file in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            let format = try #require(ImageFormat.sniff(data.prefix(12)))
            let options = DecodingOptions(pixelFormat: .rgb24)
            var cold: [Bool: [Double]] = [:]
            var warm: [Bool: [Double]] = [:]
            // Alternating, so that both see the same machine.
            for _ in 0..<rounds {
                for sandboxed in [true, false] {
                    let fresh = Self.pool(sandboxed: sandboxed, decodesPerChild: 1)
                    cold[sandboxed, default: []].append(
                        try Self.milliseconds {
                            _ = try fresh.decode(data: data, format: format, options: options, source: file)
                        })
                }
            }
            for sandboxed in [true, false] {
                let reused = Self.pool(sandboxed: sandboxed, decodesPerChild: 1000)
                _ = try reused.decode(data: data, format: format, options: options, source: file)
                for _ in 0..<rounds {
                    warm[sandboxed, default: []].append(
                        try Self.milliseconds {
                            _ = try reused.decode(data: data, format: format, options: options, source: file)
                        })
                }
                #expect(reused.statistics.sandboxed == (sandboxed ? 1 : 0))
            }
            let name = URL(fileURLWithPath: file).lastPathComponent
            let (coldOn, coldOff) = (Self.median(cold[true] ?? [0]), Self.median(cold[false] ?? [0]))
            let (warmOn, warmOff) = (Self.median(warm[true] ?? [0]), Self.median(warm[false] ?? [0]))
            lines.append(
                "\(name): start + decode \(Self.text(coldOn)) ms sandboxed, \(Self.text(coldOff)) ms not; "
                    + "warm decode \(Self.text(warmOn)) ms sandboxed, \(Self.text(warmOff)) ms not")
        }
        print(lines.joined(separator: "\n"))
    }
}
