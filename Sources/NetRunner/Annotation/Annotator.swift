public import NetRunnerImage

/// Draws detections on images: a box per detection in a colour stable per class, and a
/// label with the score above it (the seed app's overlay, as a picture file).
public enum Annotator {
    /// An RGB colour.
    public typealias Color = PixelColor

    /// Distinct, saturated colours; class `i` always gets `palette[i % count]`.
    public static let palette: [Color] = [
        Color(red: 230, green: 25, blue: 75), Color(red: 60, green: 180, blue: 75),
        Color(red: 0, green: 130, blue: 200), Color(red: 245, green: 130, blue: 48),
        Color(red: 145, green: 30, blue: 180), Color(red: 70, green: 240, blue: 240),
        Color(red: 240, green: 50, blue: 230), Color(red: 210, green: 245, blue: 60),
        Color(red: 250, green: 190, blue: 212), Color(red: 0, green: 128, blue: 128),
        Color(red: 220, green: 190, blue: 255), Color(red: 170, green: 110, blue: 40),
    ]

    /// The colour of a class: the same on every image and every run.
    ///
    /// - Parameter classIndex: The class index.
    /// - Returns: Its colour.
    public static func color(forClass classIndex: Int) -> Color {
        palette[((classIndex % palette.count) + palette.count) % palette.count]
    }

    /// A copy of `image` (as RGB) with each detection's box and label drawn.
    ///
    /// - Parameters:
    ///   - detections: The detections, in the image's pixel coordinates.
    ///   - image: The image.
    /// - Returns: An RGB image with the annotations.
    /// - Throws: ``ImageError`` if the image cannot be converted.
    /// - Complexity: O(image area) for the copy, plus the perimeter of each box.
    public static func draw(_ detections: [Detection], on image: PixelBuffer) throws(ImageError) -> PixelBuffer {
        var canvas = image.format == .rgb24 ? image : image.converted(to: .rgb24)
        let thickness = max(2, min(canvas.width, canvas.height) / 200)
        let scale = max(1, min(canvas.width, canvas.height) / 300)
        for detection in detections {
            let classIndex = detection.categories.first?.index ?? 0
            let color = color(forClass: classIndex)
            let box = detection.boundingBox
            // A model's numbers are not trusted: non-finite or far-off coordinates are clamped.
            let x0 = pixel(box.minX)
            let y0 = pixel(box.minY)
            let rect = PixelRect(x: x0, y: y0, width: pixel(box.maxX) - x0, height: pixel(box.maxY) - y0)
            canvas.strokeRectangle(rect, thickness: thickness, color: color)
            for point in detection.keypoints {
                let x = pixel(point.x)
                let y = pixel(point.y)
                canvas.fill(
                    PixelRect(x: x - thickness, y: y - thickness, width: 2 * thickness, height: 2 * thickness),
                    color: color)
            }
            let name = detection.categories.first.flatMap { $0.displayName ?? $0.label } ?? "class \(classIndex)"
            let text = "\(name) \(Int((detection.score * 100).rounded()))%"
            let size = PixelBuffer.textSize(text, scale: scale)
            let label = PixelSize(width: size.width + 2 * scale, height: size.height + 2 * scale)
            let top = y0 - label.height >= 0 ? y0 - label.height : y0
            canvas.fill(PixelRect(x: x0, y: top, width: label.width, height: label.height), color: color)
            canvas.drawText(text, x: x0 + scale, y: top + scale, scale: scale, color: .white)
        }
        return canvas
    }

    /// A copy of `image` (as RGB) with an answer drawn as its task draws it (see
    /// ``VisionTaskDefinition/draw(_:on:)``): a detector's boxes, or a classifier's top three
    /// labels with their scores in the top-left corner (a camera preview's overlay).
    ///
    /// - Parameters:
    ///   - answer: The answer, in the image's pixel coordinates.
    ///   - image: The image.
    /// - Returns: An RGB image with the annotations.
    /// - Throws: ``ImageError`` if the image cannot be converted.
    public static func draw(_ answer: ImageAnswer, on image: PixelBuffer) throws(ImageError) -> PixelBuffer {
        guard let definition = VisionTaskRegistry.definition(for: answer.kind) else { return image }
        return try definition.draw(answer: answer, on: image)
    }

    /// A copy of `image` (as RGB) with labels and their scores written in the top-left corner,
    /// one under the other, each on its class's colour.
    ///
    /// - Parameters:
    ///   - labels: The labels, their scores (0 to 1) and the class that picks their colour.
    ///   - image: The image.
    /// - Returns: An RGB image with the labels.
    public static func drawLabels(
        _ labels: [(name: String, score: Float, classIndex: Int)], on image: PixelBuffer
    ) -> PixelBuffer {
        var canvas = image.format == .rgb24 ? image : image.converted(to: .rgb24)
        let scale = max(1, min(canvas.width, canvas.height) / 240)
        var y = 2 * scale
        for label in labels {
            let text = "\(label.name) \(Int((label.score * 100).rounded()))%"
            let size = PixelBuffer.textSize(text, scale: scale)
            canvas.fill(
                PixelRect(x: 0, y: y - scale, width: size.width + 4 * scale, height: size.height + 2 * scale),
                color: color(forClass: label.classIndex))
            canvas.drawText(text, x: 2 * scale, y: y, scale: scale, color: .white)
            y += size.height + 4 * scale
        }
        return canvas
    }

    /// A coordinate as a pixel index, clamped to a range drawing can add to without overflow.
    private static func pixel(_ value: Float) -> Int {
        guard value.isFinite else { return -1 }
        return Int(min(max(value, -1_000_000), 1_000_000).rounded())
    }
}
