import CImageCodecs

/// Dot products of one vector with many, vectorised in C.
///
/// `nr_dot_rows` uses AVX2 and FMA where the CPU has them: similarity search's inner loop, fast
/// in debug builds too. Here because CImageCodecs holds the project's SIMD kernels and only this
/// layer imports it.
package enum DotProducts {
    /// The dot products of `query` with rows `rows` of `matrix` (rows of `dimension` values,
    /// one after another).
    ///
    /// - Parameters:
    ///   - query: `dimension` values.
    ///   - matrix: At least `rows.upperBound * dimension` values.
    ///   - rows: The rows compared.
    ///   - dimension: The values in each row.
    /// - Returns: One product per row, in order.
    package static func of(
        _ query: UnsafeBufferPointer<Float>, with matrix: UnsafeBufferPointer<Float>, rows: Range<Int>, dimension: Int
    ) -> [Float] {
        guard !rows.isEmpty, dimension > 0, query.count >= dimension, rows.lowerBound >= 0,
            matrix.count / dimension >= rows.upperBound, let queryBase = query.baseAddress,
            let matrixBase = matrix.baseAddress
        else { return [] }
        return [Float](unsafeUninitializedCapacity: rows.count) { buffer, initialized in
            if let out = buffer.baseAddress {
                nr_dot_rows(queryBase, matrixBase, rows.lowerBound, rows.count, dimension, out)
            }
            initialized = rows.count
        }
    }
}
