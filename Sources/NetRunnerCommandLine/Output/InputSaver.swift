import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage

/// Where `--save-input DIR` writes what the model saw: one `<name>.input.png` per image, the
/// input tensor as a picture (``ImageTask/inputImage()``), names unique as `--annotate`'s.
struct InputSaver: Sendable {
    let folder: String
    private let names: [String: String]

    /// Creates the folder if needed.
    ///
    /// - Parameters:
    ///   - folder: The `--save-input` value.
    ///   - files: The images, in order.
    /// - Throws: `ValidationError` when `folder` is an existing file; the file system's error
    ///   when it cannot be created.
    init(folder: String, files: [String]) throws {
        if FileManager.default.fileExists(atPath: folder), !ImageArguments.isDirectory(folder) {
            throw ValidationError("--save-input \(folder) is a file; name a folder (it is created if missing).")
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        self.folder = folder
        self.names = AnnotationTarget.uniqueNames(for: files, suffix: ".input.png")
    }

    /// Writes the input the task's model received for `file` on its last run.
    func save(_ task: ImageTask, for file: String) throws {
        let name =
            names[file] ?? AnnotationTarget.uniqueNames(for: [file], suffix: ".input.png")[file, default: "image"]
        try task.inputImage().write(to: folder + "/" + name, format: .png)
    }
}

/// The one task of a one-thread run, kept so its input can be read after each image.
///
/// `BulkInference` makes the task and delivers every outcome on the calling thread when it
/// runs with one thread, which `--save-input` asks for; nothing else touches it.
final class SingleThreadTask: @unchecked Sendable {
    var task: ImageTask?
}
