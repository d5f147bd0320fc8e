import CArchive
import NetRunnerFlatBuffers

/// Writes the TFLite metadata of an image classifier (the `TFLITE_METADATA` buffer, schema
/// `M001`, as tflite-support's `image_classifier.MetadataWriter` writes it) and the files it
/// names, packed as tflite-support packs them: a stored zip appended to the model, its offsets
/// from the start of the file.
///
/// What MediaPipe's `ImageClassifier` and the TFLite Task Library read: the input as an RGB
/// image with its normalisation (mean and std), the output's labels file
/// (`TENSOR_AXIS_LABELS`), so that they answer class names rather than indices. The fields
/// are those ``TFLiteMetadata`` reads back, which the tests check.
enum TFLiteMetadataWriter {
    /// What the metadata says of a classifier.
    struct Classifier {
        /// The model's name.
        var name: String
        /// What it does.
        var description: String
        /// Its version.
        var version = "1"
        /// Who made it.
        var author = ""
        /// Its licence.
        var license = ""
        /// The input's normalisation, `(x - mean) / std` per channel (one value for all).
        var mean: [Float] = [0]
        /// See ``mean``.
        var std: [Float] = [255]
        /// The classes in output order, written as `labels.txt`.
        var labels: [String]
    }

    /// The labels file's name in the model.
    static let labelsFile = "labels.txt"

    /// The `M001` metadata flatbuffer.
    ///
    /// - Parameter classifier: What it says.
    /// - Returns: The buffer's bytes.
    static func metadata(_ classifier: Classifier) -> [UInt8] {
        var builder = FlatBufferBuilder()
        func floats(_ values: [Float]) -> FlatBufferBuilder.Offset { builder.vector(values.map(\.bitPattern)) }

        // The input: an RGB image, its normalisation (ProcessUnit NormalizationOptions).
        let imageProperties: FlatBufferBuilder.Offset = {
            builder.startTable()
            builder.add(Int8(1), field: 0)  // ColorSpaceType.RGB
            return builder.endTable()
        }()
        builder.startTable()
        builder.add(UInt8(2), field: 0)  // ContentProperties.ImageProperties
        builder.add(offset: imageProperties, field: 1)
        let inputContent = builder.endTable()
        let mean = floats(classifier.mean)
        let std = floats(classifier.std)
        builder.startTable()
        builder.add(offset: mean, field: 0)
        builder.add(offset: std, field: 1)
        let normalization = builder.endTable()
        builder.startTable()
        builder.add(UInt8(1), field: 0)  // ProcessUnitOptions.NormalizationOptions
        builder.add(offset: normalization, field: 1)
        let processUnit = builder.endTable()
        let processUnits = builder.vector(offsets: [processUnit])
        let inputName = builder.string("image")
        let inputDescription = builder.string("The image to classify: RGB, stretched to the input.")
        builder.startTable()
        builder.add(offset: inputName, field: 0)
        builder.add(offset: inputDescription, field: 1)
        builder.add(offset: inputContent, field: 3)
        builder.add(offset: processUnits, field: 4)
        let input = builder.endTable()

        // The output: the scores, named by the labels file.
        builder.startTable()
        let featureProperties = builder.endTable()
        builder.startTable()
        builder.add(UInt8(1), field: 0)  // ContentProperties.FeatureProperties
        builder.add(offset: featureProperties, field: 1)
        let outputContent = builder.endTable()
        let fileName = builder.string(labelsFile)
        let fileDescription = builder.string("The classes, one per line in output order.")
        builder.startTable()
        builder.add(offset: fileName, field: 0)
        builder.add(offset: fileDescription, field: 1)
        builder.add(Int8(2), field: 2)  // AssociatedFileType.TENSOR_AXIS_LABELS
        let file = builder.endTable()
        let files = builder.vector(offsets: [file])
        let outputName = builder.string("probability")
        let outputDescription = builder.string(
            "The probability of each of the \(classifier.labels.count) classes (line i of \(labelsFile): score i).")
        builder.startTable()
        builder.add(offset: outputName, field: 0)
        builder.add(offset: outputDescription, field: 1)
        builder.add(offset: outputContent, field: 3)
        builder.add(offset: files, field: 6)
        let output = builder.endTable()

        let inputs = builder.vector(offsets: [input])
        let outputs = builder.vector(offsets: [output])
        builder.startTable()
        builder.add(offset: inputs, field: 2)
        builder.add(offset: outputs, field: 3)
        let subgraph = builder.endTable()
        let subgraphs = builder.vector(offsets: [subgraph])

        // The model's strings; an empty one left out, as tflite-support leaves it.
        let texts = [
            (0, classifier.name), (1, classifier.description), (2, classifier.version), (4, classifier.author),
            (5, classifier.license), (7, "1.0.0"),
        ]
        .filter { !$0.1.isEmpty }.map { (field: $0.0, offset: builder.string($0.1)) }
        builder.startTable()
        for (field, offset) in texts { builder.add(offset: offset, field: field) }
        builder.add(offset: subgraphs, field: 3)
        let root = builder.endTable()
        return builder.finished(root: root, identifier: "M001")
    }

    /// The labels file's bytes: one class a line.
    static func labelsText(_ labels: [String]) -> [UInt8] {
        Array(labels.joined(separator: "\n").utf8) + [10]
    }

    /// A stored (uncompressed) zip of `files`, to be appended to a model of `start` bytes: its
    /// offsets count from the start of the model file, as Python's `zipfile` writes them when
    /// tflite-support appends to a model.
    ///
    /// - Parameters:
    ///   - files: Each file's name and bytes (each under 4 GiB).
    ///   - start: Where the zip starts in the file.
    /// - Returns: The zip's bytes.
    static func packed(_ files: [(name: String, data: [UInt8])], at start: Int) -> [UInt8] {
        var zip: [UInt8] = []
        var central: [UInt8] = []
        func append16(_ value: Int, to bytes: inout [UInt8]) {
            bytes += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        func append32(_ value: UInt32, to bytes: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
        }
        // 1980-01-01 00:00: the same bytes every time.
        let (time, date) = (0, (0 << 9) | (1 << 5) | 1)
        for (name, data) in files {
            let offset = UInt32(truncatingIfNeeded: start + zip.count)
            let crc = data.withUnsafeBufferPointer { nr_crc32(0, $0.baseAddress, $0.count) }
            let nameBytes = Array(name.utf8)
            let size = UInt32(truncatingIfNeeded: data.count)
            append32(0x0403_4B50, to: &zip)
            for value in [20, 0, 0, time, date] { append16(value, to: &zip) }
            for value in [crc, size, size] { append32(value, to: &zip) }
            append16(nameBytes.count, to: &zip)
            append16(0, to: &zip)
            zip += nameBytes + data

            append32(0x0201_4B50, to: &central)
            for value in [20, 20, 0, 0, time, date] { append16(value, to: &central) }
            for value in [crc, size, size] { append32(value, to: &central) }
            for value in [nameBytes.count, 0, 0, 0, 0] { append16(value, to: &central) }
            append32(0, to: &central)
            append32(offset, to: &central)
            central += nameBytes
        }
        let centralOffset = UInt32(truncatingIfNeeded: start + zip.count)
        zip += central
        append32(0x0605_4B50, to: &zip)
        for value in [0, 0, files.count, files.count] { append16(value, to: &zip) }
        append32(UInt32(truncatingIfNeeded: central.count), to: &zip)
        append32(centralOffset, to: &zip)
        append16(0, to: &zip)
        return zip
    }
}
