import Foundation

/// Checks JSON values against the subset of JSON Schema that `docs/*.schema.json` use:
/// `type`, `properties`, `required`, `additionalProperties: false`, `items` and local `$ref`s.
/// Enough to fail a test when an output grows, loses or renames a key; not a general validator.
public struct JSONSchemaCheck {
    private let root: [String: Any]

    /// Reads a schema file.
    ///
    /// - Parameter relativePath: The schema's path from the repository root.
    public init(_ relativePath: String) throws {
        let data = try Fixtures.data(relativePath)
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CocoaError(.fileReadCorruptFile)
        }
        self.root = root
    }

    /// The problems of one JSON text (one line), each with its JSON path; empty when it conforms.
    ///
    /// - Parameter text: The JSON text.
    /// - Returns: The problems.
    public func problems(ofLine text: some StringProtocol) -> [String] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        else { return ["$: not JSON: \(text.prefix(80))"] }
        var found: [String] = []
        check(value, against: root, at: "$", into: &found)
        return found
    }

    private func resolve(_ schema: [String: Any]) -> [String: Any] {
        guard let reference = schema["$ref"] as? String, reference.hasPrefix("#/") else { return schema }
        var node: Any = root
        for part in reference.dropFirst(2).split(separator: "/") {
            node = (node as? [String: Any])?[String(part)] ?? [:]
        }
        return node as? [String: Any] ?? [:]
    }

    private func check(_ value: Any, against schema: [String: Any], at path: String, into found: inout [String]) {
        let schema = resolve(schema)
        if let type = schema["type"] as? String, !Self.matches(value, type: type) {
            found.append("\(path): expected \(type), found \(value)")
            return
        }
        if let object = value as? [String: Any] {
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                found.append("\(path): missing \(key)")
            }
            for (key, member) in object {
                if let property = properties[key] as? [String: Any] {
                    check(member, against: property, at: "\(path).\(key)", into: &found)
                } else if schema["additionalProperties"] as? Bool == false {
                    found.append("\(path): unexpected key \(key)")
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, element) in array.enumerated() {
                check(element, against: items, at: "\(path)[\(index)]", into: &found)
            }
        }
    }

    private static func matches(_ value: Any, type: String) -> Bool {
        switch type {
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        // JSONSerialization gives booleans as NSNumber's boolean subclass, on Linux and macOS.
        case "boolean": return String(describing: Swift.type(of: value)).contains("Boolean")
        case "integer":
            guard let number = value as? NSNumber, !matches(value, type: "boolean") else { return false }
            return number.doubleValue.rounded() == number.doubleValue
        case "number": return value is NSNumber && !matches(value, type: "boolean")
        default: return true
        }
    }
}
