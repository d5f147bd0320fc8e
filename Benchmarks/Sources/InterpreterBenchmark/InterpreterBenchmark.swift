import ArgumentParser
import Foundation
import TensorFlowLite

/// Our `Interpreter` against Python `ai_edge_litert`'s on the same model, input and thread
/// count, in one run. Each timed iteration is what an application pays per frame: copy the
/// input in, invoke, copy every output out. Rounds alternate between the two sides so
/// that machine noise falls on both; each round gives a median, each side keeps its best
/// round (a round disturbed by another tenant of this shared machine is discarded the same
/// way on both sides), and the ratio printed is the reference's over ours (above 1: we are
/// faster; the target is 0.97 or more).
@main
struct InterpreterBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "interpreter-bench",
        abstract: "Median latency of copy-in + invoke + copy-out: NetRunner vs Python ai_edge_litert.")

    @Option(help: "Models to measure (relative to the repository root).")
    var model: [String] = [
        "Models/mobilenet_v2_1.0_224_float32.tflite",
        "Models/mobilenet_v2_1.0_224_uint8.tflite",
        "Models/mobilenet_v2_1.0_224_int8.tflite",
    ]

    @Option(help: "Thread counts to measure.")
    var threads: [Int] = [1, 2]

    @Option(help: "Timed runs per round and side.")
    var runs = 40

    @Option(help: "Rounds per side; the sides alternate round by round.")
    var rounds = 8

    @Option(help: "Warm-up runs at the start of every round.")
    var warmup = 5

    @Option(help: "The Python interpreter that has ai-edge-litert installed.")
    var python = ".venv-bench/bin/python"

    @Option(help: "The repository root.")
    var root = FileManager.default.currentDirectoryPath

    @Flag(help: "Print one JSON object per measurement instead of a table.")
    var json = false

    struct Row: Codable {
        var model: String
        var threads: Int
        var ourMedianMicroseconds: Double
        var referenceMedianMicroseconds: Double
        var ratio: Double
        var ourSamples: Int
        var referenceSamples: Int
    }

    func run() throws {
        try Runtime.load()
        var rows: [Row] = []
        if !json {
            print("model                                   threads  ours (us)  python (us)  ratio (python/ours)")
        }
        for file in model {
            let path = URL(fileURLWithPath: root).appendingPathComponent(file).path
            for threadCount in threads {
                var ours: [Double] = []
                var reference: [Double] = []
                let input = try Self.inputFile(for: path, root: root)
                for _ in 0..<rounds {
                    ours.append(Self.median(try measureOurs(path: path, input: input, threads: threadCount)))
                    reference.append(Self.median(try measureReference(path: path, input: input, threads: threadCount)))
                }
                let row = Row(
                    model: file, threads: threadCount,
                    ourMedianMicroseconds: ours.min() ?? .nan, referenceMedianMicroseconds: reference.min() ?? .nan,
                    ratio: (reference.min() ?? .nan) / (ours.min() ?? .nan),
                    ourSamples: ours.count * runs, referenceSamples: reference.count * runs)
                rows.append(row)
                if json {
                    let data = try JSONEncoder().encode(row)
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    let name = (file as NSString).lastPathComponent.padding(toLength: 40, withPad: " ", startingAt: 0)
                    print(
                        "\(name)\(String(format: "%7d  %9.1f  %11.1f  %6.3f", threadCount, row.ourMedianMicroseconds, row.referenceMedianMicroseconds, row.ratio))"
                    )
                }
            }
        }
        let worst = rows.map(\.ratio).min() ?? 0
        let geometricMean = exp(rows.map { log($0.ratio) }.reduce(0, +) / Double(max(rows.count, 1)))
        if !json {
            print(String(format: "geometric mean of the ratios %.3f", geometricMean))
            print(String(format: "lowest ratio %.3f (target >= 0.97): %@", worst, worst >= 0.97 ? "met" : "NOT met"))
        }
    }

    /// One round on our side: a fresh interpreter, warm-up, then `runs` timed iterations.
    private func measureOurs(path: String, input: String, threads: Int) throws -> [Double] {
        var options = Interpreter.Options()
        options.threadCount = threads
        let interpreter = try Interpreter(modelPath: path, options: options)
        try interpreter.allocateTensors()
        let data = try Data(contentsOf: URL(fileURLWithPath: input))
        let outputs = interpreter.outputTensorCount
        func iteration() throws {
            try interpreter.copy(data, toInputAt: 0)
            try interpreter.invoke()
            for index in 0..<outputs { _ = try interpreter.output(at: index) }
        }
        for _ in 0..<warmup { try iteration() }
        let clock = ContinuousClock()
        var times: [Double] = []
        times.reserveCapacity(runs)
        for _ in 0..<runs {
            let start = clock.now
            try iteration()
            let (seconds, attoseconds) = (clock.now - start).components
            times.append(Double(seconds) * 1e6 + Double(attoseconds) / 1e12)
        }
        return times
    }

    /// One round on the reference side: `Benchmarks/python/bench_litert.py` in a child.
    private func measureReference(path: String, input: String, threads: Int) throws -> [Double] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python.hasPrefix("/") ? python : root + "/" + python)
        process.arguments = [
            root + "/Benchmarks/python/bench_litert.py", "--model", path, "--threads", String(threads),
            "--runs", String(runs), "--warmup", String(warmup), "--input", input,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError(
                "the reference benchmark failed (status \(process.terminationStatus)); run `make bench-setup`.")
        }
        struct Output: Decodable {
            var times: [Double]
            enum CodingKeys: String, CodingKey { case times = "times_us" }
        }
        return try JSONDecoder().decode(Output.self, from: data).times
    }

    /// The recorded reference input for a MobileNet model (a real photo, chelsea).
    static func inputFile(for model: String, root: String) throws -> String {
        let name = ((model as NSString).lastPathComponent as NSString).deletingPathExtension
        let path = root + "/Tests/Fixtures/Reference/\(name)__chelsea__in0.bin"
        guard FileManager.default.fileExists(atPath: path) else {
            throw ValidationError("no recorded input for \(model) at \(path)")
        }
        return path
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
