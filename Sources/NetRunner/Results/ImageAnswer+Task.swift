package import NetRunnerImage

// What every surface shows of an answer, each asked of the task it comes from (see
// ``VisionTaskDefinition``): the printers, the CSV results file and the pages.
extension ImageAnswer {
    /// The answer as `classify` and `detect` print it: a heading line, then a line per answer.
    ///
    /// - Parameter image: The image's path, in the heading.
    /// - Returns: The lines.
    package func textLines(image: String) -> [String] {
        VisionTaskRegistry.definition(for: kind)?.textLines(answer: self, image: image) ?? [image]
    }

    /// The answer in one line, after a frame's heading (`stream`).
    package var summary: String {
        VisionTaskRegistry.definition(for: kind)?.summary(answer: self) ?? ""
    }

    /// The answer in the three answer columns of a CSV results file.
    package var csvFields: (answer: String, score: String, results: String) {
        VisionTaskRegistry.definition(for: kind)?.csvFields(answer: self) ?? ("", "", "")
    }

    /// Each answer's label and score, with its box (`[x, y, width, height]`) if it has one.
    package var shownAnswers: [(label: String, score: Float, box: [Float]?)] {
        VisionTaskRegistry.definition(for: kind)?.shownAnswers(answer: self) ?? []
    }

    /// The original image's size, when the answer knows it.
    package var imageSize: PixelSize? {
        VisionTaskRegistry.definition(for: kind)?.imageSize(answer: self)
    }
}
