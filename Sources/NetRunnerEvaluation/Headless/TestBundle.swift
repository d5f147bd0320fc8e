import FoundationEssentials
import NetRunner
import NetRunnerImage
import NetRunnerSupport

/// A Net Runner headless test bundle: a `.testbundle` folder holding `test.json` and the
/// images it lists.
public struct TestBundle: Sendable {
    /// The bundle folder.
    public let path: String
    /// Its `test.json`.
    public let description: TestBundleDescription

    /// The path of the bundle's `test.json`, for messages.
    public var descriptionPath: String { path + "/test.json" }

    /// Reads and checks a test bundle.
    ///
    /// - Parameter path: The `.testbundle` folder.
    /// - Throws: ``EvaluationError/invalidTest(file:reason:)`` when the folder or its `test.json`
    ///   is missing or an image file it lists does not exist; ``ModelBundleError`` when
    ///   `test.json` is malformed.
    public init(path: String) throws {
        let base = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.path = base
        let file = base + "/test.json"
        let data: Data
        do {
            data = try FileIO.contents(of: file)
        } catch {
            throw EvaluationError.invalidTest(
                file: file, reason: "cannot read the test bundle's description (\(error))")
        }
        description = try TestBundleDescription.parse(data, source: file)
        var missing: [String] = []
        for (index, image) in description.images.enumerated() {
            guard case .file(let relative) = image else { continue }
            if !FileManager.default.fileExists(atPath: base + "/" + relative) {
                missing.append("\(relative) ($.images[\(index)])")
            }
        }
        if !missing.isEmpty {
            throw EvaluationError.invalidTest(
                file: file, reason: "lists images that do not exist: " + missing.joined(separator: ", "))
        }
    }

    /// Where an image is read from: the file inside the bundle, or the local file a `file://`
    /// URL names; `nil` for network URLs (not fetched: the run reports those images as failed).
    ///
    /// - Parameter image: The image.
    /// - Returns: Its path.
    public func localPath(of image: TestBundleDescription.ImageSource) -> String? {
        switch image {
        case .file(let relative): return path + "/" + relative
        case .url(let url): return url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : nil
        }
    }
}
