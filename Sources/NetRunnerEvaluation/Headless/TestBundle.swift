import FoundationEssentials
import NetRunner
import NetRunnerImage
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        do throws(ContainedFolder.Refusal) {
            data = try ContainedFolder(base, name: "the test bundle").contents(of: "test.json")
        } catch  where error.leadsOutside {
            throw EvaluationError.invalidTest(file: file, reason: "\(error)")
        } catch {
            throw EvaluationError.invalidTest(
                file: file, reason: "cannot read the test bundle's description (\(error))")
        }
        var description = try TestBundleDescription.parse(data, source: file)
        description.folder = base
        self.description = description
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

    /// Where an image is read from: the real path of its file, only when that lies inside the
    /// bundle once links are resolved (``ContainedFolder``'s check, as `hub push`, `import` and
    /// model bundles make it); `nil` for anything else (see ``refusal(of:)``), so a test bundle
    /// can never make evaluate read, report or embed a file from elsewhere (an absolute path,
    /// `../`, a link out, a `file://` URL).
    ///
    /// - Parameter image: The image.
    /// - Returns: The path to read.
    public func localPath(of image: TestBundleDescription.ImageSource) -> String? {
        guard case .file(let relative) = image else { return nil }
        return try? ContainedFolder(path, name: "the test bundle").resolve(relative)
    }

    /// Why an image is not read, or `nil` when it is (``localPath(of:)``).
    ///
    /// - Parameter image: The image.
    /// - Returns: The reason, naming the image and, for a link that leads out, where it points,
    ///   but nothing of what that file holds.
    public func refusal(of image: TestBundleDescription.ImageSource) -> String? {
        guard localPath(of: image) == nil else { return nil }
        switch image {
        case .url(let url) where url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://"):
            return "\(url): network images are not downloaded yet; put the file in the test bundle"
        case .url(let url):
            return "\(url): only files inside the test bundle and http(s) URLs are read"
        case .file(let relative):
            do throws(ContainedFolder.Refusal) {
                _ = try ContainedFolder(path, name: "the test bundle").resolve(relative)
            } catch  where error.leadsOutside {
                return "\(error)"
            } catch {
                return "\(relative): not read, \(error)"
            }
            return "\(relative): not read, it lies outside the test bundle (an absolute path, ../ or a link out)"
        }
    }

}
