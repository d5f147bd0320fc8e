import ArgumentParser
import Foundation
import NetRunner
import NetRunnerImage
import TensorFlowLite

/// The "images in, answers out" benchmarks, ours and Python's side by side in one run:
///
/// 1. folder throughput: classify a folder of real JPEG and BMP photos (0.2-2 MP), decode to
///    top-5, against Python (Pillow + numpy + ai_edge_litert) with the same threads, plain
///    and hand-tuned (Pillow's draft() DCT downscaling, a decode thread);
/// 2. pipeline efficiency: our folder time over the time the runtime alone needs for the
///    same number of inferences with the same threads;
/// 3. cold start: `netrunner classify one.jpg` against `python classify_one.py one.jpg`, as
///    whole processes.
@main
struct PipelineBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline-bench", abstract: "Folder throughput, pipeline efficiency and cold start, vs Python.")

    @Option(help: "The folder of photos (made by Benchmarks/python/make_photo_folder.py if missing).")
    var folder = "out/bench/photos"

    @Option(help: "Photos in the folder when it is made.")
    var count = 200

    @Option(help: "The model, relative to the repository root.")
    var model = "Models/mobilenet_v2_1.0_224_uint8.tflite"

    @Option(help: "Repetitions of each measurement (the best is kept: the machine is shared).")
    var repeats = 3

    @Option(help: "Cold-start runs per side (the median is kept).")
    var coldRuns = 10

    @Option(help: "The Python interpreter with ai-edge-litert, numpy and pillow.")
    var python = ".venv-bench/bin/python"

    @Option(help: "The repository root.")
    var root = FileManager.default.currentDirectoryPath

    func run() throws {
        try Runtime.load()
        let python = self.python.hasPrefix("/") ? self.python : root + "/" + self.python
        let modelPath = root + "/" + model
        let labels = root + "/Models/imagenet_labels.txt"
        if !FileManager.default.fileExists(atPath: folder) {
            _ = try Self.run(
                python, [root + "/Benchmarks/python/make_photo_folder.py", "--out", folder, "--count", String(count)])
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
            $0.hasSuffix(".jpg") || $0.hasSuffix(".bmp")
        }.sorted().map { folder + "/" + $0 }
        print("Folder: \(files.count) photos in \(folder); model \(model)")

        // Python, plain and tuned, 1 and 2 threads.
        func pythonFolder(_ arguments: [String]) throws -> (seconds: Double, top1: [String: String]) {
            var best = Double.infinity
            var top1: [String: String] = [:]
            for _ in 0..<repeats {
                let output = try Self.run(
                    python,
                    [root + "/Benchmarks/python/classify_folder.py", folder, "--model", modelPath, "--labels", labels]
                        + arguments)
                struct Report: Decodable {
                    var wallSeconds: Double
                    var top1: [String: String]
                    enum CodingKeys: String, CodingKey {
                        case top1
                        case wallSeconds = "wall_s"
                    }
                }
                let report = try JSONDecoder().decode(Report.self, from: Data(output.utf8))
                if report.wallSeconds < best { best = report.wallSeconds }
                top1 = report.top1
            }
            return (best, top1)
        }
        let plain1 = try pythonFolder(["--mode", "plain", "--threads", "1", "--workers", "0"])
        let plain2 = try pythonFolder(["--mode", "plain", "--threads", "2", "--workers", "0"])
        let tunedThreads = try pythonFolder(["--mode", "tuned", "--threads", "2", "--workers", "0"])
        let tunedWorker = try pythonFolder(["--mode", "tuned", "--threads", "1", "--workers", "1"])
        let tunedBest = min(tunedThreads.seconds, tunedWorker.seconds)

        // Ours: 1 inference thread (decoding on the other core), and 2 inference threads.
        let ours1 = try ourFolder(files: files, model: modelPath, labels: labels, threads: 1)
        let ours2 = try ourFolder(files: files, model: modelPath, labels: labels, threads: 2)
        let oursParallel = try ourParallelFolder(files: files, model: modelPath, labels: labels, workers: 2)
        let ours2Best = min(ours2.seconds, oursParallel)
        let oursBest = min(ours1.seconds, ours2Best)
        let runtime1 = try runtimeAlone(model: modelPath, threads: 1, inferences: files.count)
        let runtime2 = try runtimeAlone(model: modelPath, threads: 2, inferences: files.count)
        let runtimeParallel = try runtimeAloneParallel(model: modelPath, workers: 2, inferences: files.count)

        let agreement = ours1.top1.filter { file, label in
            plain1.top1[(file as NSString).lastPathComponent] == label
        }.count
        func rate(_ seconds: Double) -> String {
            String(format: "%7.1f img/s (%.2f s)", Double(files.count) / seconds, seconds)
        }
        print("")
        print("Python plain,  1 thread            \(rate(plain1.seconds))")
        print("Python plain,  2 threads           \(rate(plain2.seconds))")
        print("Python tuned,  2 threads           \(rate(tunedThreads.seconds))")
        print("Python tuned,  1 thread + 1 worker \(rate(tunedWorker.seconds))")
        print("NetRunner,     1 thread + prefetch \(rate(ours1.seconds))")
        print("NetRunner,     2 threads + prefetch\(rate(ours2.seconds))")
        print("NetRunner,     2 workers x 1 thread\(rate(oursParallel))")
        print("Runtime alone, 1 thread            \(rate(runtime1))")
        print("Runtime alone, 2 threads           \(rate(runtime2))")
        print("Runtime alone, 2 x 1 thread        \(rate(runtimeParallel))")
        print("")
        print(
            String(
                format:
                    "folder throughput vs Python plain, same threads: 1 thread %.2fx, 2 threads %.2fx (target >= 2)",
                plain1.seconds / ours1.seconds, plain2.seconds / ours2Best))
        print(
            String(
                format: "folder throughput vs hand-tuned Python (best of its 2-thread setups): %.2fx (target >= 1.3)",
                tunedBest / oursBest))
        print(
            String(
                format: "pipeline efficiency (folder / runtime alone): 1 thread %.2f, 2 threads %.2f (target <= 1.25)",
                ours1.seconds / runtime1, ours2Best / runtime2))
        print("top-1 agreement with Python plain: \(agreement) of \(files.count)")

        // Cold start: whole processes, one image.
        let one = files.first { $0.hasSuffix(".jpg") } ?? files[0]
        let netrunner = root + "/.build/release/netrunner"
        // Spawned with posix_spawn: Foundation's Process adds tens of milliseconds here.
        let ourCold = try Self.medianWall(coldRuns) {
            try Self.spawn(netrunner, ["classify", "--model", modelPath, "--labels", labels, one])
        }
        let pythonCold = try Self.medianWall(coldRuns) {
            try Self.spawn(python, [root + "/Benchmarks/python/classify_one.py", one, modelPath, labels])
        }
        print(
            String(
                format: "cold start, one image: netrunner %.1f ms, Python %.1f ms: %.2fx (target >= 4)",
                ourCold * 1000, pythonCold * 1000, pythonCold / ourCold))
    }

    /// Our folder run, in process: a prefetching decoder and a classifier, best of `repeats`.
    func ourFolder(files: [String], model: String, labels: String, threads: Int) throws -> (
        seconds: Double, top1: [String: String]
    ) {
        var options = ImageClassifier.Options()
        options.threadCount = threads
        let classifier = try ImageClassifier(modelPath: model, labelsPath: labels, options: options)
        _ = try classifier.classify(try PixelBuffer(width: 224, height: 224, format: .rgb24))  // warm-up
        var best = Double.infinity
        var top1: [String: String] = [:]
        for _ in 0..<repeats {
            let start = Date()
            let prefetcher = ImagePrefetcher(
                paths: files, options: classifier.decodingOptions, preprocessing: classifier.preprocessing, lookahead: 3
            )
            while let item = prefetcher.next() {
                let result = try classifier.run(try item.prepared.get(), decodeTime: item.decodeTime)
                top1[item.path] = result.categories.first?.displayName ?? ""
            }
            best = min(best, Date().timeIntervalSince(start))
        }
        return (best, top1)
    }

    /// Our folder run with one single-threaded classifier per core (what `netrunner classify
    /// --threads 2` does with several images), best of `repeats`.
    func ourParallelFolder(files: [String], model: String, labels: String, workers: Int) throws -> Double {
        var options = ImageClassifier.Options()
        options.threadCount = 1
        let chosen = options
        var best = Double.infinity
        for _ in 0..<repeats {
            let start = Date()
            try ParallelRunner.run(
                count: files.count, workers: workers,
                makeWorker: { try ImageClassifier(modelPath: model, labelsPath: labels, options: chosen) },
                work: { classifier, index in
                    (try? classifier.classify(fileAt: files[index]))?.categories.first?.index ?? -1
                },
                deliver: { _, _ in })
            best = min(best, Date().timeIntervalSince(start))
        }
        return best
    }

    /// The runtime alone with one single-threaded interpreter per worker thread.
    func runtimeAloneParallel(model: String, workers: Int, inferences: Int) throws -> Double {
        var best = Double.infinity
        for _ in 0..<repeats {
            let start = Date()
            try ParallelRunner.run(
                count: inferences, workers: workers,
                makeWorker: { () throws -> Interpreter in
                    var options = Interpreter.Options()
                    options.threadCount = 1
                    let interpreter = try Interpreter(modelPath: model, options: options)
                    try interpreter.allocateTensors()
                    return interpreter
                },
                work: { interpreter, _ in (try? interpreter.invoke()) != nil },
                deliver: { _, _ in })
            best = min(best, Date().timeIntervalSince(start))
        }
        return best
    }

    /// The runtime alone: the same number of inferences on one prepared input, best of `repeats`.
    func runtimeAlone(model: String, threads: Int, inferences: Int) throws -> Double {
        var options = Interpreter.Options()
        options.threadCount = threads
        let interpreter = try Interpreter(modelPath: model, options: options)
        try interpreter.allocateTensors()
        let input = try interpreter.input(at: 0)
        try interpreter.copy(Data(repeating: 128, count: input.data.count), toInputAt: 0)
        try interpreter.invoke()
        var best = Double.infinity
        for _ in 0..<repeats {
            let start = Date()
            for _ in 0..<inferences { try interpreter.invoke() }
            best = min(best, Date().timeIntervalSince(start))
        }
        return best
    }

    static func medianWall(_ runs: Int, _ body: () throws -> Void) throws -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = Date()
            try body()
            times.append(Date().timeIntervalSince(start))
        }
        times.sort()
        return times[times.count / 2]
    }

    /// Runs a program with its output discarded and waits for it; fails on a non-zero exit.
    static func spawn(_ executable: String, _ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = argv.withUnsafeBufferPointer { pointer -> Int32 in
            guard let base = pointer.baseAddress else { return EINVAL }
            return posix_spawn(&pid, executable, &actions, nil, UnsafeMutablePointer(mutating: base), environ)
        }
        guard spawned == 0 else { throw ValidationError("cannot start \(executable): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { throw ValidationError("\(executable) failed with status \(status)") }
    }

    /// Runs a program, returns its stdout; fails on a non-zero exit.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError(
                "\(executable) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
