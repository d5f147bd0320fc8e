import Dispatch
public import NetRunnerImage
import Synchronization

/// Decodes image files on background threads, a few ahead of the caller, so decoding
/// overlaps inference: while the model runs on one image, the next ones are being decoded
/// (and, given a model's preprocessing, turned into input tensors) on the other cores.
///
///     let prefetcher = ImagePrefetcher(
///         paths: files, options: classifier.decodingOptions, preprocessing: classifier.preprocessing)
///     while let item = prefetcher.next() {
///         let result = try classifier.classify(try item.prepared.get(), decodeTime: item.decodeTime)
///     }
///
/// Images come back in the order of `paths`. At most `lookahead` decoded images wait in
/// memory at any time, so memory stays flat however many files there are.
///
/// - Note: `next()` is meant for one consumer thread. Releasing the prefetcher stops the
///   background thread after the image it is decoding.
public final class ImagePrefetcher: Sendable {
    /// One decoded file (or why it could not be decoded).
    public struct Item: Sendable {
        /// The file's path.
        public var path: String
        /// The decoded image, or the decoding error.
        public var image: Result<DecodedImage, ImageError>
        /// How long decoding took.
        public var decodeTime: Duration
        /// The input tensor made from the image: the decoding error when decoding failed, the
        /// preprocessing's own error when it cannot be applied, and
        /// ``NetRunnerError/invalidOption(name:reason:)`` when the prefetcher was given none.
        public var prepared: Result<PreparedImage, any Error>
    }

    private struct State {
        /// Finished items by their index in `paths`, until the consumer takes them.
        var ready: [Int: Item] = [:]
        /// The next index a decoder takes.
        var nextIndex = 0
        var cancelled = false
    }

    /// What the consumer and the background decoders share.
    ///
    /// The decoders hold only this, not the prefetcher, so releasing the prefetcher can stop them.
    private final class Shared: Sendable {
        let state = Mutex(State())
        /// Signalled each time an item is added, for the consumer waiting for its index.
        let added = DispatchSemaphore(value: 0)
        let slots: DispatchSemaphore

        init(lookahead: Int) {
            // Created at 0 and raised: libdispatch traps when a semaphore is released with a
            // value below the one it was created with, which a prefetcher released before
            // its last image (a cancelled run) would otherwise be.
            slots = DispatchSemaphore(value: 0)
            for _ in 0..<lookahead { slots.signal() }
        }
    }

    private let paths: [String]
    private let shared: Shared
    private let decoders: Int
    private let consumed = Atomic<Int>(0)

    /// Starts decoding `paths` in the background.
    ///
    /// - Parameters:
    ///   - paths: The image files, in the order they will be returned.
    ///   - options: How to decode them (pixel limit, JPEG downscaling).
    ///   - preprocessing: If given, each image is also turned into this model input on the
    ///     background thread (``Item/prepared``), so the consumer only runs the model.
    ///   - lookahead: How many decoded images may wait ahead of the consumer (at least 1; at
    ///     least `decoders` are allowed, so that every decoder can work).
    ///   - decoders: Background threads decoding side by side (at least 1): one keeps a lone
    ///     CPU interpreter fed; a GPU, which runs a model in a fraction of a photo's decoding
    ///     time, needs every core decoding.
    public init(
        paths: [String], options: DecodingOptions = DecodingOptions(), preprocessing: ImagePreprocessing? = nil,
        lookahead: Int = 2, decoders: Int = 1
    ) {
        self.paths = paths
        let decoders = max(1, min(decoders, max(1, paths.count)))
        self.decoders = decoders
        let shared = Shared(lookahead: max(decoders, lookahead))
        self.shared = shared
        let count = paths.count
        // The decoders' threads decode where the caller's task would (its bound environment).
        let environment = ImageDecoder.environment
        for _ in 0..<decoders {
            DispatchQueue.global(qos: .userInitiated).async {
                ImageDecoder.$environment.withValue(environment) {
                    let clock = ContinuousClock()
                    // Each decoder's own tensorizer: tensorizers are not shared between threads.
                    let tensorizer = preprocessing.map { preprocessing in
                        Result { () throws(NetRunnerError) in try ImageTensorizer(preprocessing: preprocessing) }
                    }
                    while true {
                        shared.slots.wait()
                        let index: Int? = shared.state.withLock { state in
                            guard !state.cancelled, state.nextIndex < count else { return nil }
                            state.nextIndex += 1
                            return state.nextIndex - 1
                        }
                        guard let index else {
                            shared.slots.signal()  // pass the slot on, so the other decoders also end
                            return
                        }
                        let path = paths[index]
                        let start = clock.now
                        let image = Result { () throws(ImageError) in
                            try ImageDecoder.decode(contentsOf: path, options: options)
                        }
                        let decoded = clock.now
                        let prepared = Result { () throws -> PreparedImage in
                            let decodedImage = try image.get()
                            guard let tensorizer else {
                                throw NetRunnerError.invalidOption(
                                    name: "preprocessing",
                                    reason: "the prefetcher was given none, so it prepares no input")
                            }
                            let ready = try tensorizer.get()
                            let transform = try ready.prepare(decodedImage)
                            return PreparedImage(
                                input: ready.input, transform: transform, preprocessingTime: clock.now - decoded)
                        }
                        let item = Item(path: path, image: image, decodeTime: decoded - start, prepared: prepared)
                        shared.state.withLock { $0.ready[index] = item }
                        shared.added.signal()
                    }
                }
            }
        }
    }

    deinit {
        shared.state.withLock { $0.cancelled = true }
        // Wake the decoders that wait for room, so they see the flag and end.
        for _ in 0..<decoders { shared.slots.signal() }
    }

    /// The next decoded image, waiting for it if needed; `nil` after the last one.
    ///
    /// - Returns: The next item in the order of the paths.
    public func next() -> Item? {
        let index = consumed.load(ordering: .relaxed)
        guard index < paths.count else { return nil }
        while true {
            if let item = shared.state.withLock({ $0.ready.removeValue(forKey: index) }) {
                consumed.store(index + 1, ordering: .relaxed)
                shared.slots.signal()
                return item
            }
            // Woken by every item added, ours or a later one: look again.
            shared.added.wait()
        }
    }
}
