public import NetRunnerImage

extension ImageAnswer {
    /// The answer with its coordinates (a detector's boxes and keypoints) moved to the same
    /// picture at another size.
    ///
    /// For a video frame scaled by ffmpeg, reported in the source's pixels. An answer without
    /// coordinates (a classifier's) is returned as it is (see ``VisionTaskDefinition/scaled(_:from:to:)``).
    ///
    /// - Parameters:
    ///   - size: The size of the image the model ran on.
    ///   - target: The size to report in.
    /// - Returns: The answer in `target`'s pixels.
    public func scaled(from size: PixelSize, to target: PixelSize) -> ImageAnswer {
        guard size != target, size.width > 0, size.height > 0,
            let definition = VisionTaskRegistry.definition(for: kind)
        else { return self }
        return definition.scaled(answer: self, from: size, to: target)
    }
}
