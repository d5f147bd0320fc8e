public import NetRunnerImage

extension ImageAnswer {
    /// The answer with a detector's boxes and keypoints moved to the same picture at another size.
    ///
    /// For a video frame scaled by ffmpeg, reported in the source's pixels. A classifier's
    /// answer is returned as it is.
    ///
    /// - Parameters:
    ///   - size: The size of the image the model ran on.
    ///   - target: The size to report in.
    /// - Returns: The answer in `target`'s pixels.
    public func scaled(from size: PixelSize, to target: PixelSize) -> ImageAnswer {
        guard case .detection(var result) = self, size != target, size.width > 0, size.height > 0 else { return self }
        let sx = Float(target.width) / Float(size.width)
        let sy = Float(target.height) / Float(size.height)
        result.detections = result.detections.map { detection in
            var detection = detection
            let box = detection.boundingBox
            detection.boundingBox = BoundingBox(
                minX: box.minX * sx, minY: box.minY * sy, maxX: box.maxX * sx, maxY: box.maxY * sy)
            detection.keypoints = detection.keypoints.map { Keypoint(x: $0.x * sx, y: $0.y * sy) }
            return detection
        }
        result.imageWidth = target.width
        result.imageHeight = target.height
        return .detection(result)
    }
}
