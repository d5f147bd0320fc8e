package import FoundationEssentials
import NetRunnerSupport

/// The JSON part of a KServe infer request with each input's `data` found but not parsed: the
/// rest, small, for `JSONDecoder`, and where each `data` lies, for ``KServeTensorCodec``.
///
/// A hand-written walk over the bytes, since `Codable` would materialise every number of
/// `data` (see ``KServeTensorCodec``). It follows only `inputs[i].data` and skips every other
/// value by counting brackets (no recursion, so nesting costs nothing); the rest of the
/// grammar is left to `JSONDecoder`, which reads the skeleton.
package struct KServeInferBody {
    /// The JSON with each input's `data` value replaced by `null`.
    package let skeleton: Data
    /// Where each input's `data` value lies in the bytes given, by the input's index in `inputs`.
    package let data: [Int: Range<Int>]

    /// The most bytes of JSON a request may hold outside its inputs' `data` (names, shapes,
    /// datatypes, parameters): what `JSONDecoder` reads, whose memory grows many times the text.
    package static let maximumSkeletonBytes = 1 << 20

    /// Finds the inputs' data in a request's JSON.
    ///
    /// Memory stays bounded by the body's size whatever its shape: malformed JSON (a `data`
    /// array never closed, say) is refused here with its line and column, never handed whole to
    /// `JSONDecoder`, and so is JSON whose part outside the inputs' `data` is larger than
    /// ``maximumSkeletonBytes``.
    ///
    /// - Parameter json: The JSON part of the body.
    /// - Throws: ``KServeTensorCodec/Refusal`` for malformed JSON, `inputs` given twice (which of
    ///   the two a decoder takes is its own choice), or too much JSON outside the inputs' data.
    package init(json: UnsafeRawBufferPointer) throws(KServeTensorCodec.Refusal) {
        var walk = Walk(text: json)
        do throws(Walk.Stop) {
            try walk.root()
            walk.skipSpace()
            if walk.index < json.count { throw .malformed }
        } catch Walk.Stop.duplicateInputs {
            throw KServeTensorCodec.Refusal(description: "The request has \"inputs\" twice.")
        } catch {
            // The scanner's reason where it finds one (it builds nothing), else where the walk
            // stopped; a large body only the latter (a second pass over 30 MiB costs seconds).
            let reason: String
            if json.count <= Self.maximumSkeletonBytes, let (line, column, what) = JSONSyntax.firstError(in: Data(json))
            {
                reason = "line \(line), column \(column): \(what)"
            } else if walk.index >= json.count {
                reason = "it ends at byte \(json.count) before its value is closed (a body cut short?)"
            } else {
                reason = "at byte \(walk.index + 1): not JSON as KServe v2 takes it (no comments or trailing commas)"
            }
            throw KServeTensorCodec.Refusal(
                description: "The inference request is not valid JSON for KServe v2: \(reason)")
        }
        let outside = json.count - walk.blanked.reduce(0) { $0 + $1.count }
        guard outside <= Self.maximumSkeletonBytes else {
            throw KServeTensorCodec.Refusal(
                description:
                    "The inference request has \(outside) bytes of JSON outside its inputs' \"data\"; "
                    + "at most \(Self.maximumSkeletonBytes) bytes are read (send large tensors as \"data\" or binary).")
        }
        data = walk.data
        let found = walk.blanked.sorted { $0.lowerBound < $1.lowerBound }
        var skeleton = Data()
        skeleton.reserveCapacity(json.count - found.reduce(0) { $0 + $1.count } + 4 * found.count)
        var start = 0
        for range in found {
            skeleton.append(contentsOf: UnsafeRawBufferPointer(rebasing: json[start..<range.lowerBound]))
            skeleton.append(contentsOf: "null".utf8)
            start = range.upperBound
        }
        skeleton.append(contentsOf: UnsafeRawBufferPointer(rebasing: json[start...]))
        self.skeleton = skeleton
    }

    package struct Walk {
        enum Stop: Error {
            case malformed
            case duplicateInputs
        }

        let text: UnsafeRawBufferPointer
        var index = 0
        var data: [Int: Range<Int>] = [:]
        var blanked: [Range<Int>] = []

        init(text: UnsafeRawBufferPointer) {
            self.text = text
        }

        var current: UInt8? { index < text.count ? text[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(Stop) {
            skipSpace()
            guard current == byte else { throw .malformed }
            index += 1
        }

        /// The members of an object (at its `{`), each value handed to `member` at its first byte.
        mutating func object(_ member: (inout Walk, String) throws(Stop) -> Void) throws(Stop) {
            try expect(UInt8(ascii: "{"))
            skipSpace()
            if current == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipSpace()
                let name = try string()
                try expect(UInt8(ascii: ":"))
                skipSpace()
                try member(&self, name)
                skipSpace()
                guard let byte = current else { throw .malformed }
                index += 1
                if byte == UInt8(ascii: "}") { return }
                guard byte == UInt8(ascii: ",") else { throw .malformed }
            }
        }

        mutating func root() throws(Stop) {
            var sawInputs = false
            try object { (walk: inout Walk, name: String) throws(Stop) in
                guard name == "inputs", walk.current == UInt8(ascii: "[") else { return try walk.skipValue() }
                guard !sawInputs else { throw .duplicateInputs }
                sawInputs = true
                try walk.inputs()
            }
        }

        mutating func inputs() throws(Stop) {
            index += 1
            skipSpace()
            if current == UInt8(ascii: "]") {
                index += 1
                return
            }
            var position = 0
            while true {
                skipSpace()
                if current == UInt8(ascii: "{") {
                    let input = position
                    try object { (walk: inout Walk, name: String) throws(Stop) in
                        let start = walk.index
                        try walk.skipValue()
                        if name == "data" {
                            walk.data[input] = start..<walk.index
                            walk.blanked.append(start..<walk.index)
                        }
                    }
                } else {
                    try skipValue()
                }
                position += 1
                skipSpace()
                guard let byte = current else { throw .malformed }
                index += 1
                if byte == UInt8(ascii: "]") { return }
                guard byte == UInt8(ascii: ",") else { throw .malformed }
            }
        }

        /// A string (at its `"`), its escapes decoded (member names only, so short).
        mutating func string() throws(Stop) -> String {
            guard current == UInt8(ascii: "\"") else { throw .malformed }
            let start = index + 1
            try skipString()
            let raw = UnsafeRawBufferPointer(rebasing: text[start..<(index - 1)])
            guard raw.contains(UInt8(ascii: "\\")) else { return String(decoding: raw, as: UTF8.self) }
            guard raw.count <= 4096 else { return "" }
            return (try? JSONDecoder().decode([String].self, from: Data("[\"".utf8) + Data(raw) + Data("\"]".utf8)))?
                .first ?? ""
        }

        /// Skips a string (at its `"`).
        mutating func skipString() throws(Stop) {
            index += 1
            while let byte = current {
                index += 1
                if byte == UInt8(ascii: "\"") { return }
                if byte == UInt8(ascii: "\\") { index += 1 }
            }
            throw .malformed
        }

        /// Skips any value: strings, scalars, and containers by counting brackets.
        mutating func skipValue() throws(Stop) {
            guard let first = current else { throw .malformed }
            switch first {
            case UInt8(ascii: "\""):
                try skipString()
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                var depth = 0
                while let byte = current {
                    switch byte {
                    case UInt8(ascii: "\""):
                        try skipString()
                        continue
                    case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
                    case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
                    default: break
                    }
                    index += 1
                    if depth == 0 { return }
                }
                throw .malformed
            default:
                let start = index
                while let byte = current, byte != UInt8(ascii: ","), byte != UInt8(ascii: "]"),
                    byte != UInt8(ascii: "}"), byte != 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D
                {
                    index += 1
                }
                guard index > start else { throw .malformed }
            }
        }
    }
}
