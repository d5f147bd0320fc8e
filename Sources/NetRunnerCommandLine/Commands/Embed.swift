import ArgumentParser
import NetRunner
import NetRunnerSupport
import Synchronization

extension NetRunnerCommand {
    /// `netrunner embed IMAGE...`: each image's embedding, and how alike the images are.
    struct Embed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each image's embedding (a vector near another's when the images look alike).",
            discussion: """
                Without --model, the embedder installed with NetRunner (mobilenet-v1-1.0-224-quant-embedding-extractor, \
                Coral's MobileNet V1 cut at its average pool: 1024 values, in share/netrunner/models); a build that is \
                not installed has none built in and needs --model: a model whose first output is one vector ([1, N] or \
                [1, 1, 1, N]), as a .tflite file, a bundle folder, a zipped bundle, a catalog id or hub:; or, with \
                --penultimate, a classifier cut at its penultimate layer. The whole image is resized to the input. With two images or more, the cosine similarity of each pair follows \
                (1: the same direction). --json prints MediaPipe's embedding per image (float_embedding, and \
                quantized_embedding with --quantize); `bulk` writes them for a whole folder, and `similar` searches \
                them.
                """)

        @OptionGroup var inputs: ImageArguments

        @OptionGroup var model: RequiredModelOptions

        @Flag(
            name: .customLong("l2-normalize"),
            help: "Divide each embedding by its length (MediaPipe's l2_normalize): unit vectors.")
        var l2Normalize = false

        @Flag(
            help:
                "Also give each embedding as signed bytes, quantized_embedding beside float_embedding (MediaPipe's quantize: each value times 128, rounded, clamped); use with --l2-normalize."
        )
        var quantize = false

        @Flag(
            help:
                "Embed with a classifier's penultimate layer: the input of its last fully connected layer or 1 x 1 convolution (MobileNet V2: 1280 values). Without --model, the embedded MobileNet V2."
        )
        var penultimate = false

        @Flag(help: "Print one JSON object per image (JSON Lines).")
        var json = false

        func validate() throws {
            guard !inputs.images.isEmpty else { throw ValidationError("Name at least one image file or folder.") }
        }

        func run() async throws {
            var options = ImageEmbedder.Options()
            options.l2Normalize = l2Normalize
            options.quantize = quantize
            let json = self.json
            let answers = Mutex<[(file: String, result: EmbeddingResult)]>([])
            try await ImageRun.run(
                ImageEmbedder.self, options: options, model: model, inputs: inputs, json: json,
                defaultKind: penultimate ? .classification : .embedding,
                adapt: { [penultimate] in penultimate ? try $0.penultimateLayer() : $0 },
                print: { file, _, result in
                    try AnswerOutput.print(result.imageAnswer, file: file, json: json)
                    answers.withLock { $0.append((file, result)) }
                })
            if !json { Self.printSimilarities(answers.withLock { $0 }) }
        }

        /// The cosine similarity of every pair of images, the most alike first (at most 50 lines).
        static func printSimilarities(_ answers: [(file: String, result: EmbeddingResult)]) {
            guard answers.count >= 2 else { return }
            var pairs: [(a: String, b: String, similarity: Double)] = []
            for i in answers.indices {
                for j in answers.indices where j > i {
                    if let similarity = try? ImageEmbedder.cosineSimilarity(answers[i].result, answers[j].result) {
                        pairs.append((answers[i].file, answers[j].file, similarity))
                    }
                }
            }
            pairs.sort { $0.similarity != $1.similarity ? $0.similarity > $1.similarity : ($0.a, $0.b) < ($1.a, $1.b) }
            Console.print("cosine similarity:")
            for pair in pairs.prefix(50) {
                Console.print("  \(fixedDecimals(pair.similarity, 4))  \(pair.a)  \(pair.b)")
            }
            if pairs.count > 50 {
                Console.print("  (\(pairs.count - 50) more pairs; `netrunner similar` searches many)")
            }
        }
    }
}
