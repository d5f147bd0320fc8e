import Foundation

/// Results files as tests compare them.
public enum ResultsLines {
    /// A JSON Lines results file's lines with their latencies left out (they differ run to run),
    /// keys sorted: what two runs of the same work must agree on.
    ///
    /// - Parameter path: The results file.
    /// - Returns: One normalized line per record.
    public static func withoutLatencies(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { line in
            guard var object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "\(path): \(line)"])
            }
            for key in ["decode_latency", "preprocessor_latency", "inference_latency", "total_latency"] {
                object[key] = nil
            }
            return String(
                decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
        }
    }
}
