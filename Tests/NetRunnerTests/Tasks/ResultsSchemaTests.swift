import Foundation
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// `docs/results-line.schema.json` holds exactly the library's tasks' results, each as its
/// definition's ``VisionTaskDefinition/resultsSchema`` says (the server's OpenAPI document is
/// made from the definitions themselves).
@Suite("Results schemas")
struct ResultsSchemaTests {
    /// A schema with its `$ref`s to `#/$defs/NAME` replaced by the definitions.
    static func resolved(_ value: Any, definitions: [String: Any]) -> Any {
        if let object = value as? [String: Any] {
            if let reference = object["$ref"] as? String, reference.hasPrefix("#/$defs/"),
                let target = definitions[String(reference.dropFirst("#/$defs/".count))]
            {
                return resolved(target, definitions: definitions)
            }
            return object.mapValues { resolved($0, definitions: definitions) }
        }
        if let array = value as? [Any] { return array.map { resolved($0, definitions: definitions) } }
        return value
    }

    @Test("Each library task's part of docs/results-line.schema.json is its definition's schema, and no other part")
    func docsAgree() throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Fixtures.data("docs/results-line.schema.json")) as? [String: Any])
        let definitions = document["$defs"] as? [String: Any] ?? [:]
        let results = try #require(
            ((document["properties"] as? [String: Any])?["inference_results"] as? [String: Any])?["properties"]
                as? [String: Any])
        let library: [ImageTask.Kind] = [.classification, .detection, .pose, .segmentation, .embedding]
        #expect(Set(results.keys) == Set(library.map(\.rawValue)))
        for kind in library {
            let definition = try #require(VisionTaskRegistry.definition(for: kind))
            let own = try JSONSerialization.jsonObject(with: Data(definition.resultsSchema.utf8))
            let documented = Self.resolved(results[kind.rawValue] ?? [:], definitions: definitions)
            #expect((own as? NSDictionary) == (documented as? NSDictionary), "\(kind)")
        }
    }
}
