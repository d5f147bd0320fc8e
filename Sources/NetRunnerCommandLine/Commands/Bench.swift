import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerSupport
import TensorFlowLite

extension NetRunnerCommand {
    /// `netrunner bench MODEL`: latency and memory, modelled on TFLite's benchmark_model.
    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure a model's load time, inference latency and memory, as TFLite's benchmark_model does.",
            discussion: """
                Inputs are filled with seeded random values (floats in [0, 1)). Timings cover \
                invoke() only; the first inference and the warm-up runs are reported apart and \
                left out of the statistics.

                benchmark_model's flag names are accepted too (--graph=M, --num_threads=N, \
                --num_runs=N, --warmup_runs=N, --min_secs=S, --max_secs=S), so its command lines \
                work unchanged. Per-operator profiling (--enable_op_profiling) is not available: \
                the runtime's TFLite C API, which NetRunner's Interpreter uses, has no profiler \
                hook (LiteRT 2.3 profiles only its CompiledModel API).
                """)

        @Argument(help: "A .tflite model file, a bundle folder or a zipped bundle.")
        var model: String?

        @Option(name: .customLong("graph"), help: "The model, as benchmark_model names it (instead of MODEL).")
        var graph: String?

        @OptionGroup var runtime: RuntimeOptions
        @OptionGroup var hardware: AcceleratorOptions

        @Option(
            name: .customLong("num_threads"), parsing: .unconditional,
            help: "benchmark_model's name for --runtime-threads.")
        var numThreads: Int?

        @Option(name: [.customLong("runs"), .customLong("num_runs")], parsing: .unconditional, help: "Timed runs.")
        var runs = 50

        @Option(
            name: [.customLong("warmup"), .customLong("warmup_runs")], parsing: .unconditional,
            help: "Warm-up runs after the first inference, not timed into the statistics.")
        var warmup = 1

        @Option(
            name: [.customLong("min-seconds"), .customLong("min_secs")], parsing: .unconditional,
            help:
                "Keep running past --runs until this many seconds have passed (benchmark_model's --min_secs is 1 unless given)."
        )
        var minSeconds: Double = 0

        @Option(
            name: [.customLong("max-seconds"), .customLong("max_secs")], parsing: .unconditional,
            help: "Stop the timed runs after this many seconds.")
        var maxSeconds: Double = 150

        @Flag(
            name: .customLong("enable_op_profiling"),
            help: "Per-operator profiling: not available (see above); refused with the reason.")
        var opProfiling = false

        @Flag(help: "Print JSON instead of text.")
        var json = false

        struct Report: Codable {
            var model: String
            var modelBytes: Int
            var threads: Int
            var runtime: String
            /// What the model ran on: `cpu` or `gpu`.
            var accelerator: String
            /// Whether every operator ran there.
            var fullyAccelerated: Bool
            var initMilliseconds: Double
            var firstInferenceMicroseconds: Double
            var warmupMeanMicroseconds: Double?
            var inferenceMicroseconds: Timings
            var residentBytesBefore: Int?
            var residentBytesAfterInit: Int?
            var peakResidentBytes: Int?
        }

        /// benchmark_model's summary of the timed runs, from ``LatencySummary`` (in microseconds).
        struct Timings: Codable, Equatable {
            var count: Int
            var first: Double
            var min: Double
            var max: Double
            var mean: Double
            var std: Double
            var median: Double
            var p5: Double
            var p95: Double

            init?(_ values: [Double]) {
                guard let first = values.first, let summary = LatencySummary(milliseconds: values) else { return nil }
                let sorted = values.sorted()
                self.count = summary.count
                self.first = first
                self.min = summary.min
                self.max = summary.max
                self.mean = summary.mean
                self.std = summary.standardDeviation
                self.median = summary.median
                self.p5 = LatencySummary.percentile(5, ofSorted: sorted)
                self.p95 = LatencySummary.percentile(95, ofSorted: sorted)
            }
        }

        func validate() throws {
            try OptionLimits.check(runs, "--runs", in: 1...1_000_000)
            try OptionLimits.check(warmup, "--warmup", in: 0...1_000_000)
            try OptionLimits.checkSeconds(maxSeconds, "--max-seconds")
            if minSeconds != 0 { try OptionLimits.checkSeconds(minSeconds, "--min-seconds") }
            if let numThreads { try OptionLimits.checkThreads(numThreads) }
            switch (model, graph) {
            case (nil, nil): throw ValidationError("Name the model: netrunner bench MODEL (or --graph=MODEL).")
            case (.some, .some): throw ValidationError("Name the model once: MODEL or --graph, not both.")
            default: break
            }
            if opProfiling {
                throw ValidationError(
                    "--enable_op_profiling is not available: the runtime's TFLite C API has no profiler hook "
                        + "(LiteRT 2.3 profiles only its CompiledModel API, which NetRunner does not use yet).")
            }
        }

        /// The model named by MODEL or --graph.
        var modelPath: String { model ?? graph ?? "" }

        /// The interpreter options: --threads, or benchmark_model's --num_threads.
        var interpreterOptions: Interpreter.Options {
            var options = runtime.interpreterOptions
            options.accelerator = hardware.choice
            if let numThreads { options.threadCount = numThreads }
            return options
        }

        func run() throws {
            try Runtime.load()
            let clock = ContinuousClock()
            // Read as every command reads a model (a bundle's or zip's model file too), and
            // through the model gate before anything is timed (its child runs once per model).
            let loaded = try LoadedModel(.path(modelPath))
            try ModelGate.admit(loaded)
            let before = ProcessMemory.residentBytes
            let start = clock.now
            let interpreter = try Interpreter(
                modelData: loaded.modelData, source: loaded.modelFile, options: interpreterOptions)
            AcceleratorNotice.note(requested: hardware.choice, fallbackReason: interpreter.acceleratorFallbackReason)
            try interpreter.allocateTensors()
            let initTime = clock.now - start
            let afterInit = ProcessMemory.residentBytes

            var generator = SplitMix64(seed: 42)
            for index in 0..<interpreter.inputTensorCount {
                let input = try interpreter.input(at: index)
                try interpreter.copy(Self.randomData(for: input, using: &generator), toInputAt: index)
            }

            let first = try Self.time(clock) { try interpreter.invoke() }
            var warmups: [Double] = []
            for _ in 0..<warmup { warmups.append(try Self.time(clock) { try interpreter.invoke() }) }
            var timings: [Double] = []
            let timedStart = clock.now
            let deadline = timedStart + .milliseconds(Int64(maxSeconds * 1000))
            let minimum = timedStart + .milliseconds(Int64(minSeconds * 1000))
            // benchmark_model's rule: at least --num_runs and at least --min_secs, at most --max_secs.
            while timings.count < runs || clock.now < minimum {
                timings.append(try Self.time(clock) { try interpreter.invoke() })
                if clock.now > deadline { break }
            }
            guard let timings = Timings(timings) else {
                throw ValidationError("The model's run times are not finite; nothing to report.")
            }
            let report = Report(
                model: modelPath, modelBytes: interpreter.modelSizeInBytes, threads: numThreads ?? runtime.threads,
                runtime: "LiteRT \(Runtime.version)",
                accelerator: interpreter.accelerator.rawValue, fullyAccelerated: interpreter.isFullyAccelerated,
                initMilliseconds: Self.microseconds(initTime) / 1000,
                firstInferenceMicroseconds: first,
                warmupMeanMicroseconds: warmups.isEmpty ? nil : warmups.reduce(0, +) / Double(warmups.count),
                inferenceMicroseconds: timings,
                residentBytesBefore: before, residentBytesAfterInit: afterInit,
                peakResidentBytes: ProcessMemory.peakResidentBytes)
            if json {
                try Console.printJSON(report)
            } else {
                printText(report)
            }
        }

        private func printText(_ report: Report) {
            let us = { (value: Double) in Console.format(value, decimals: 1) }
            let stats = report.inferenceMicroseconds
            Console.print("Model: \(report.model)")
            Console.print("The input model file size (MB): \(Console.megabytes(report.modelBytes))")
            Console.print("Threads: \(report.threads)  Runtime: \(report.runtime)")
            Console.print(
                "Accelerator: \(report.accelerator)"
                    + (report.accelerator == "cpu"
                        ? "" : report.fullyAccelerated ? " (every operator)" : " (some operators on the CPU)"))
            Console.print("Initialized session in \(Console.format(report.initMilliseconds, decimals: 3)) ms.")
            Console.print(
                "Inference timings in us: Init: \(us(report.initMilliseconds * 1000)), First inference: \(us(report.firstInferenceMicroseconds)), "
                    + "Warmup (avg): \(report.warmupMeanMicroseconds.map(us) ?? "-"), Inference (avg): \(us(stats.mean))"
            )
            Console.print(
                "count=\(stats.count) first=\(us(stats.first)) min=\(us(stats.min)) max=\(us(stats.max)) "
                    + "avg=\(us(stats.mean)) std=\(us(stats.std)) median=\(us(stats.median)) p5=\(us(stats.p5)) p95=\(us(stats.p95))"
            )
            if let before = report.residentBytesBefore, let after = report.residentBytesAfterInit,
                let peak = report.peakResidentBytes
            {
                Console.print(
                    "Memory footprint delta from the start of the tool (MB): init=\(Console.megabytes(after - before)) "
                        + "overall=\(Console.megabytes(peak - before))")
                Console.print("Peak resident memory (VmHWM, MB): \(Console.megabytes(peak))")
            }
        }

        static func time(_ clock: ContinuousClock, _ body: () throws -> Void) throws -> Double {
            let start = clock.now
            try body()
            return microseconds(clock.now - start)
        }

        static func microseconds(_ duration: Duration) -> Double {
            duration.inMilliseconds * 1000
        }

        /// Bytes for `tensor`: floats in [0, 1), other types random bytes.
        static func randomData(for tensor: Tensor, using generator: inout SplitMix64) -> Data {
            var data = Data(count: tensor.data.count)
            data.withUnsafeMutableBytes { raw in
                switch tensor.dataType {
                case .float32:
                    let floats = raw.bindMemory(to: Float.self)
                    for i in floats.indices { floats[i] = Float(generator.next() >> 40) / Float(1 << 24) }
                default:
                    for i in raw.indices { raw[i] = UInt8(truncatingIfNeeded: generator.next()) }
                }
            }
            return data
        }
    }
}
