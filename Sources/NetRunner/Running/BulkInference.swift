public import TensorFlowLite

/// Runs a model over many image files with every core busy and memory flat: Net Runner's
/// photo-album evaluation, for folders far larger than an album.
///
/// With one thread, one interpreter runs while the next images are decoded and preprocessed
/// on a second thread (``ImagePrefetcher``). With several, each thread has its own
/// single-threaded interpreter and decodes its own images (``ParallelRunner``): on a machine
/// with few cores that beats one interpreter spread over every core, because decoding costs
/// about as much as inference and no core waits for another. Either way at most a few
/// decoded images are in memory at once, however many files there are.
///
/// On the GPU one interpreter (one compiled model: the GPU is one shared device) runs every
/// image while all the threads decode and preprocess ahead of it.
public enum BulkInference {
    /// Runs the model on every file, handing each outcome to `deliver` in file order.
    ///
    /// - Parameters:
    ///   - files: The image files.
    ///   - threads: The threads to use (1 or more).
    ///   - accelerator: What the tasks `makeTask` makes run on. For ``Accelerator/gpu`` and
    ///     ``Accelerator/auto`` one task is made first; when it runs on the GPU, it runs every
    ///     image and the threads decode for it.
    ///   - batchSize: On the GPU, how many images a classifier runs per invoke (a GPU idles on
    ///     one image at a time); ignored on the CPU, where one image per interpreter is fastest.
    ///   - makeTask: Loads the model for one thread, with the runtime thread count given.
    ///   - isCancelled: Checked before each image; once it returns `true` no new image starts
    ///     and the images not started are not delivered.
    ///   - deliver: Receives each file's index and outcome, in order, one call at a time.
    /// - Throws: The first error `makeTask` throws.
    public static func run(
        files: [String], threads: Int, accelerator: Accelerator = .cpu, batchSize: Int = 1,
        makeTask: @Sendable (_ threadCount: Int) throws -> ImageTask,
        isCancelled: @Sendable () -> Bool = { false },
        deliver: @Sendable (_ index: Int, _ outcome: Result<ImageAnswer, BulkFailure>) -> Void
    ) throws {
        guard !files.isEmpty else { return }
        var gpuTask: ImageTask?
        if accelerator != .cpu {
            let task = try makeTask(1)
            if task.accelerator == .gpu { gpuTask = task }
        }
        if gpuTask != nil || threads <= 1 || files.count == 1 {
            let task = try gpuTask ?? makeTask(max(1, threads))
            let decoders = gpuTask == nil ? 1 : max(1, threads)
            let prefetcher = ImagePrefetcher(
                paths: files, options: task.decodingOptions, preprocessing: task.preprocessing,
                lookahead: max(3, 2 * decoders), decoders: decoders)
            if gpuTask != nil, batchSize > 1, task.definition?.runsInBatches == true {
                runBatches(task, prefetcher: prefetcher, size: batchSize, isCancelled: isCancelled, deliver: deliver)
                return
            }
            var index = 0
            while !isCancelled(), let item = prefetcher.next() {
                let outcome = Result { () throws(BulkFailure) in
                    do {
                        return try task.run(try item.prepared.get(), decodeTime: item.decodeTime)
                    } catch {
                        throw BulkFailure(error)
                    }
                }
                deliver(index, outcome)
                index += 1
            }
        } else {
            try ParallelRunner.run(
                count: files.count, workers: threads,
                makeWorker: { try makeTask(1) },
                work: { task, index -> Result<ImageAnswer, BulkFailure>? in
                    guard !isCancelled() else { return nil }
                    return Result { () throws(BulkFailure) in
                        do {
                            return try task.run(fileAt: files[index])
                        } catch {
                            throw BulkFailure(error)
                        }
                    }
                },
                deliver: { index, outcome in
                    if let outcome { deliver(index, outcome) }
                })
        }
    }

    /// The GPU's loop: up to `size` prepared images per run of the model, outcomes delivered in
    /// order (an image that could not be decoded is delivered as its failure, the rest of its
    /// batch still runs).
    private static func runBatches(
        _ task: ImageTask, prefetcher: ImagePrefetcher, size: Int, isCancelled: @Sendable () -> Bool,
        deliver: @Sendable (_ index: Int, _ outcome: Result<ImageAnswer, BulkFailure>) -> Void
    ) {
        var index = 0
        while !isCancelled() {
            var items: [ImagePrefetcher.Item] = []
            while items.count < size, let item = prefetcher.next() { items.append(item) }
            guard !items.isEmpty else { return }
            let ready = items.compactMap { item in
                (try? item.prepared.get()).map { (image: $0, decodeTime: item.decodeTime) }
            }
            let answers = Result { () throws(BulkFailure) in
                do {
                    return try task.run(batch: ready, capacity: size)
                } catch {
                    throw BulkFailure(error)
                }
            }
            var next = 0
            for item in items {
                let outcome: Result<ImageAnswer, BulkFailure>
                switch item.prepared {
                case .failure(let error):
                    outcome = .failure(BulkFailure(error))
                case .success:
                    outcome = answers.map { $0[next] }
                    next += 1
                }
                deliver(index, outcome)
                index += 1
            }
        }
    }
}
