/// Builds HTML text with everything from outside escaped.
struct HTMLWriter {
    private(set) var text = ""

    mutating func raw(_ html: String) {
        text += html
    }

    mutating func element(_ name: String, _ content: String) {
        text += "<\(name)>\(Self.escape(content))</\(name)>"
    }

    func escaped(_ value: String) -> String {
        Self.escape(value)
    }

    static func escape(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for character in value {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
