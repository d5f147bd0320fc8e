import Foundation
import Hummingbird
import HummingbirdCore
import NetRunner
import Testing

@testable import NetRunnerServer

/// A task's own answer options and its picture answer come from its definition (issue 55,
/// item 6): the generic route and the OpenAPI document name no task. The segmenter's `mask` is
/// the one the library's tasks have; the routes' behaviour with it is PoseSegmentRouteTests'.
@Suite("A task's own answer options, from its definition")
struct TaskAnswerOptionTests {
    static func options(_ query: String, task: ImageTask.Kind) throws -> AnswerOptions {
        try AnswerOptions(URI("/v1/models/m/x?" + query).queryParameters, task: task)
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("The segmenter's definition reads mask: the model's size unless mask=image; other tasks check it only")
    func readByTheDefinition() throws {
        #expect(try Self.options("", task: .segmentation).taskOptions.maskResolution == .model)
        #expect(try Self.options("mask=image", task: .segmentation).taskOptions.maskResolution == .image)
        #expect(try Self.options("mask=model", task: .segmentation).taskOptions.maskResolution == .model)
        // A classifier's options never name a mask (its batcher takes the engine's defaults).
        #expect(try Self.options("mask=image", task: .classification).taskOptions.maskResolution == nil)
        #expect(try Self.options("maxResults=3", task: .classification).taskOptions.maskResolution == nil)
        for task in [ImageTask.Kind.segmentation, .classification] {
            #expect {
                try Self.options("mask=full", task: task)
            } throws: { error in
                "\(error)".contains(
                    #"mask must be model (the mask at the model's output resolution, the default) or image (at the photo's size), not "full"."#
                )
            }
        }
        #expect {
            try Self.options("masks=image", task: .segmentation)
        } throws: { error in
            "\(error)".contains(
                "the answer options are maxResults, scoreThreshold, categoryAllowlist, categoryDenylist and mask.")
        }
    }

    @Test("The OpenAPI document lists each task's own options and the task routes name them; none, none named")
    func documented() throws {
        let all = VisionTaskRegistry.definitions
        let base = try Self.object(OpenAPIDocument.base(tasks: all))
        let parameters = try #require((base["components"] as? [String: Any])?["parameters"] as? [String: Any])
        let mask = try #require(parameters["mask"] as? [String: Any])
        #expect(mask["in"] as? String == "query")
        #expect((mask["schema"] as? [String: Any])?["enum"] as? [String] == ["model", "image"])
        let operations = try Self.object(OpenAPIDocument.operations(tasks: all))
        func references(_ operation: String) throws -> [String] {
            let parameters = try #require((operations[operation] as? [String: Any])?["parameters"] as? [[String: Any]])
            return parameters.compactMap { $0["$ref"] as? String }
        }
        for operation in ["segment", "classify", "runAlbum"] {
            #expect(try references(operation).contains("#/components/parameters/mask"), "\(operation)")
        }
        // Tasks with no option of their own: no such parameter, and the document still parses.
        let classifiers = all.filter { $0.kind == .classification }
        #expect(classifiers.count == 1)
        let plain = try Self.object(OpenAPIDocument.base(tasks: classifiers))
        #expect(((plain["components"] as? [String: Any])?["parameters"] as? [String: Any])?["mask"] == nil)
        let plainOperations = try Self.object(OpenAPIDocument.operations(tasks: classifiers))
        let classify = try #require((plainOperations["classify"] as? [String: Any])?["parameters"] as? [[String: Any]])
        #expect(!classify.contains { ($0["$ref"] as? String)?.hasSuffix("/mask") == true })
        #expect(plainOperations["segment"] == nil)
    }
}
