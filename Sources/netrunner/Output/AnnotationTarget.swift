import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage

/// Where `detect --annotate` writes annotated images.
struct AnnotationTarget: Sendable {
    let path: String
    let isFolder: Bool

    init(path: String, imageCount: Int) throws {
        self.path = path
        let lower = path.lowercased()
        let isFile = [".png", ".jpg", ".jpeg"].contains { lower.hasSuffix($0) }
        if imageCount > 1 || !isFile {
            guard !isFile else {
                throw ValidationError(
                    "--annotate \(path) names one file, but there are \(imageCount) images; name a folder.")
            }
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            isFolder = true
        } else {
            isFolder = false
        }
    }

    /// Draws the detections on the image at `file` (decoded again at full size) and writes it.
    func write(_ result: DetectionResult, on file: String) throws {
        var options = DecodingOptions()
        options.pixelFormat = .rgb24
        let image = try ImageDecoder.decode(contentsOf: file, options: options)
        let annotated = try Annotator.draw(result.detections, on: image.pixels)
        let output: String
        if isFolder {
            let name = file.split(separator: "/").last.map(String.init) ?? "image"
            let stem = name.split(separator: ".").dropLast().joined(separator: ".")
            output = path + "/" + (stem.isEmpty ? name : stem) + ".annotated.png"
        } else {
            output = path
        }
        let format: ImageFormat = output.lowercased().hasSuffix(".png") ? .png : .jpeg
        try annotated.write(to: output, format: format, quality: 92)
    }
}
