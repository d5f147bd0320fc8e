import ArgumentParser
import NetRunner

extension NetRunnerCommand {
    /// `netrunner segment --model MODEL IMAGE...`: the class of every pixel of each image.
    struct Segment: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the classes found in each image and the share of its pixels each covers.",
            discussion: """
                Without --model, the DeepLab v3 installed with NetRunner (deeplabv3-mnv2-pascal-quant, in \
                share/netrunner/models); a build that is not installed has none built in and needs --model: \
                a semantic segmentation model such as DeepLab \
                v3 (output [1, H, W] class indices or [1, H, W, classes] scores), as a .tflite file, a bundle \
                folder, a zipped bundle, a catalog id or hub:. The whole image is resized to the input; the mask is \
                made at the image's size. A model without labels (a bare .tflite) shows classes by index: --labels \
                names them (Models/pascal_voc_segmentation_labels.txt for DeepLab's Pascal VOC). --annotate writes \
                each image with its mask blended in (PNG or JPEG, by the output's extension; with several images, \
                OUT is a folder).
                """)

        @OptionGroup var task: LocatingTaskOptions

        func run() async throws {
            try await task.run(ImageSegmenter.self, options: ImageSegmenter.Options())
        }
    }
}
