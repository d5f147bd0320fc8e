#if canImport(CFaiss)
    import NetRunnerSupport

    extension FaissEmbeddingIndex {
        /// How many vectors an index needs to be trained on, from its factory string.
        public struct Training: Sendable, Equatable {
            /// The most centroids one of its k-means makes (IVF's lists; PQ's 2^bits codes per
            /// sub-vector), 0 when it names none.
            public var centroids: Int
            /// The fewest vectors accepted: 39 per centroid, FAISS's least before it warns.
            public var minimum: Int
            /// The most vectors trained on: 256 per centroid, as many as FAISS's k-means uses.
            public var maximum: Int
        }

        /// FAISS's least vectors per centroid (`ClusteringParameters.min_points_per_centroid`).
        public static let leastPerCentroid = 39
        /// FAISS's most vectors per centroid (`ClusteringParameters.max_points_per_centroid`).
        public static let mostPerCentroid = 256

        /// The training a factory string asks for: `IVF1024` 1,024 centroids, `PQ64` 256
        /// (`PQ64x4`: 16), `OPQ16_64` 256; the largest counts.
        ///
        /// - Parameter factory: FAISS's description.
        /// - Returns: The numbers (centroids 0, minimum 1, maximum 100,000 when it names none).
        public static func training(for factory: String) -> Training {
            var centroids = 0
            for token in factory.split(separator: ",") {
                for part in token.split(separator: "_") {
                    if part.hasPrefix("IVF"), let lists = Int(part.dropFirst(3).prefix { $0.isNumber }) {
                        centroids = max(centroids, lists)
                    } else if part.hasPrefix("PQ") || part.hasPrefix("OPQ") {
                        let bits = part.split(separator: "x").dropFirst().first.flatMap {
                            Int($0.prefix { $0.isNumber })
                        }
                        centroids = max(centroids, 1 << min(max(bits ?? 8, 1), 16))
                    }
                }
            }
            guard centroids > 0 else { return Training(centroids: 0, minimum: 1, maximum: 100_000) }
            return Training(
                centroids: centroids, minimum: leastPerCentroid * centroids, maximum: mostPerCentroid * centroids)
        }

        /// A FAISS index of an exact index's embeddings: made from `factory` (inner product on
        /// the normalised embeddings), trained on a sample when it needs training, filled, and
        /// its search parameter (HNSW's `efSearch`, IVF's `nprobe`) set to the least that reaches
        /// `recallTarget` at 10 against exact search.
        ///
        /// - Parameters:
        ///   - exact: The embeddings and their paths.
        ///   - factory: FAISS's description: `Flat` (exact), `HNSW32`, `IVF1024,Flat`, `IVF1024,PQ64`...
        ///   - modelSHA256: The model file's SHA-256, for the sidecar.
        ///   - preprocessing: The model's preprocessing, for the sidecar.
        ///   - recallTarget: The recall at 10 the search parameter is raised to reach.
        ///   - seed: The seed of the training sample and of the queries recall is measured on.
        /// - Returns: The index.
        /// - Throws: `NetRunnerError.invalidOption` (`index-type`) when there are too few
        ///   embeddings to train `factory`; ``FaissError`` for a factory FAISS refuses.
        public static func build(
            from exact: EmbeddingIndex, factory: String, modelSHA256: String? = nil,
            preprocessing: FaissSidecar.Preprocessing? = nil, recallTarget: Double = 0.95, seed: UInt64 = 57
        ) throws -> FaissEmbeddingIndex {
            let index = try FaissIndex(factory: factory, dimension: exact.dimension, metric: .innerProduct)
            var random = SplitMix64(seed: seed)
            var trained = 0
            if !index.isTrained {
                let needs = training(for: factory)
                guard exact.count >= needs.minimum else {
                    throw NetRunnerError.invalidOption(name: "index-type", reason: tooFew(factory, needs, exact.count))
                }
                let rows = sample(min(exact.count, needs.maximum), of: exact.count, &random)
                try index.train(values(of: rows, in: exact))
                trained = rows.count
            }
            try index.add(exact.vectors)
            let (parameters, recall) = try calibrate(
                index, factory: factory, exact: exact, target: recallTarget, &random)
            let sidecar = FaissSidecar(
                faissVersion: FaissIndex.version, factory: factory, metric: FaissIndex.Metric.innerProduct.rawValue,
                normalized: true, dimension: exact.dimension, count: exact.count, model: exact.model,
                modelSHA256: modelSHA256, preprocessing: preprocessing, searchParameters: parameters,
                recallAt10: recall, trainingCount: trained, paths: exact.paths)
            return try FaissEmbeddingIndex(index: index, sidecar: sidecar)
        }

        /// Why there are too few embeddings to train a factory, and what to use instead.
        static func tooFew(_ factory: String, _ needs: Training, _ count: Int) -> String {
            var lists = 1
            while lists * 2 * leastPerCentroid <= count { lists *= 2 }
            let instead = lists >= 16 ? ", or IVF\(lists),Flat" : ""
            return "\(factory) trains \(needs.centroids) centroids and needs at least \(needs.minimum) embeddings "
                + "(\(leastPerCentroid) per centroid, FAISS's least); there are \(count): use Flat (exact) or "
                + "HNSW32\(instead)"
        }

        /// `count` distinct rows of `total`, in order, drawn with `random`.
        static func sample(_ count: Int, of total: Int, _ random: inout SplitMix64) -> [Int] {
            guard count < total else { return Array(0..<total) }
            var rows = Array(0..<total)
            for position in 0..<count {
                rows.swapAt(position, Int.random(in: position..<total, using: &random))
            }
            return rows.prefix(count).sorted()
        }

        /// The embeddings of `rows`, one after another.
        static func values(of rows: [Int], in exact: EmbeddingIndex) -> [Float] {
            var values: [Float] = []
            values.reserveCapacity(rows.count * exact.dimension)
            for row in rows { values += exact.vectors[row * exact.dimension..<(row + 1) * exact.dimension] }
            return values
        }

        /// The search parameter of `factory` set to the least value that reaches `target`, and
        /// the recall at 10 reached (`nil`, `nil` for an exact index).
        static func calibrate(
            _ index: FaissIndex, factory: String, exact: EmbeddingIndex, target: Double, _ random: inout SplitMix64
        ) throws -> (String?, Double?) {
            let first = factory.split(separator: ",").first.map(String.init) ?? factory
            guard factory != "Flat", exact.count > 1 else { return (nil, nil) }
            let name: String?
            var candidates: [Int] = []
            if first.hasPrefix("IVF") {
                name = "nprobe"
                let lists = max(1, training(for: first).centroids)
                var probes = 1
                while probes < lists {
                    candidates.append(probes)
                    probes *= 2
                }
                candidates.append(lists)
            } else if factory.contains("HNSW") {
                name = "efSearch"
                candidates = [16, 32, 64, 128, 256, 512, 1024, 2048]
            } else {
                name = nil
            }
            let queries = sample(min(exact.count, 200), of: exact.count, &random)
            let k = min(10, exact.count - 1)
            let truth = try queries.map { row in
                Set(try exact.search(exact.embedding(at: row), k: k, excluding: row).map(\.index))
            }
            let queryValues = values(of: queries, in: exact)
            func recall() throws -> Double {
                let found = try index.search(queryValues, k: min(exact.count, k + 1))
                var hits = 0
                for (position, row) in queries.enumerated() {
                    hits +=
                        found[position].filter { $0.id != row }.prefix(k).filter { truth[position].contains($0.id) }
                        .count
                }
                return Double(hits) / Double(queries.count * k)
            }
            guard let name else { return (nil, try recall()) }
            var reached = (parameters: "", recall: -1.0)
            for value in candidates {
                let parameters = "\(name)=\(value)"
                try index.setParameters(parameters)
                reached = (parameters, try recall())
                if reached.recall >= target { break }
            }
            return (reached.parameters, reached.recall)
        }
    }
#endif
