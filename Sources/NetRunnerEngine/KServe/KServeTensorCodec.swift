package import FoundationEssentials
package import NetRunnerSupport
package import TensorFlowLite

/// KServe v2 tensors and LiteRT's bytes, both ways: the one table of datatypes (name and
/// element size for every ``Tensor/DataType``), JSON `data` parsed straight into a tensor's
/// bytes, and a tensor's bytes written as JSON `data`.
///
/// JSON `data` is read by a scanner over the request's bytes, not by `Codable`: a decoder
/// materialises the whole array (a tree of values or a `[Double]`, some 30 bytes a number)
/// before anything can be checked, so 32 MiB of `1,1,1,...` cost a gigabyte; here each number
/// is checked against the input's datatype and written into the tensor's buffer as it is read,
/// and the first value past the shape's element count ends the request.
///
/// Floating-point outputs that hold NaN or infinities are written as Triton writes them (its
/// JSON writer's NaN and Inf flag): the bare literals `NaN`, `Infinity` and `-Infinity`, which
/// Python's `json` and the Triton clients read back; strict JSON has no spelling for them.
/// Inputs take strict JSON only: those literals in `data` are refused.
package enum KServeTensorCodec {
    /// A KServe datatype: its names and the bytes of one element.
    package struct Datatype: Equatable, Sendable {
        /// KServe's name (`FP32`, `UINT8`, `BYTES`...), in metadata and requests.
        package let name: String
        /// Triton's name in a model configuration (`TYPE_FP32`, `TYPE_UINT8`, `TYPE_STRING`...),
        /// model_config.proto's `DataType`.
        package let configName: String
        /// Bytes per element; `nil` for `BYTES`, whose elements vary.
        package let size: Int?
    }

    /// Why a tensor's data was refused: a message naming the input, for a 400.
    package struct Refusal: KindedFailure, Equatable {
        /// The message.
        package let description: String
        /// A request the model cannot take: 400.
        package var failureKind: FailureKind { .invalid }
    }

    /// The KServe datatype of each LiteRT element type (`nil` for `complex64`).
    ///
    /// KServe has no datatype for complex numbers. The one table: metadata, model
    /// configurations, request checks and responses all use it.
    ///
    /// - Parameter type: The tensor's element type.
    /// - Returns: The names and element size.
    package static func datatype(_ type: Tensor.DataType) -> Datatype? {
        switch type {
        case .bool: Datatype(name: "BOOL", configName: "TYPE_BOOL", size: 1)
        case .uInt8: Datatype(name: "UINT8", configName: "TYPE_UINT8", size: 1)
        case .int8: Datatype(name: "INT8", configName: "TYPE_INT8", size: 1)
        case .uInt16: Datatype(name: "UINT16", configName: "TYPE_UINT16", size: 2)
        case .int16: Datatype(name: "INT16", configName: "TYPE_INT16", size: 2)
        case .float16: Datatype(name: "FP16", configName: "TYPE_FP16", size: 2)
        case .bFloat16: Datatype(name: "BF16", configName: "TYPE_BF16", size: 2)
        case .uInt32: Datatype(name: "UINT32", configName: "TYPE_UINT32", size: 4)
        case .int32: Datatype(name: "INT32", configName: "TYPE_INT32", size: 4)
        case .float32: Datatype(name: "FP32", configName: "TYPE_FP32", size: 4)
        case .uInt64: Datatype(name: "UINT64", configName: "TYPE_UINT64", size: 8)
        case .int64: Datatype(name: "INT64", configName: "TYPE_INT64", size: 8)
        case .float64: Datatype(name: "FP64", configName: "TYPE_FP64", size: 8)
        case .string: Datatype(name: "BYTES", configName: "TYPE_STRING", size: nil)
        case .complex64: nil
        }
    }

    /// The name metadata shows for a type: KServe's, else the LiteRT name in capitals.
    package static func name(_ type: Tensor.DataType) -> String {
        datatype(type)?.name ?? "\(type)".uppercased()
    }

    /// The name a model configuration shows for a type: Triton's, else `TYPE_INVALID`, as
    /// Triton names a type it has none for.
    package static func configName(_ type: Tensor.DataType) -> String {
        datatype(type)?.configName ?? "TYPE_INVALID"
    }

    // MARK: JSON data in

    /// Parses an input's JSON `data` (a flat array, or arrays nested exactly as `shape`) into
    /// the tensor's bytes, little-endian, checking every value against `type`.
    ///
    /// - Parameters:
    ///   - json: The text of the `data` value.
    ///   - type: The input's element type (fixed-size types only).
    ///   - shape: The input's shape, its element count already checked.
    ///   - count: The element count of `shape`.
    ///   - input: The input's name, for messages.
    /// - Returns: `count` elements of `type`.
    /// - Throws: ``Refusal`` at the first value that does not fit, the first value past
    ///   `count`, nesting unlike `shape`, or anything but numbers (`true`/`false` for `BOOL`).
    package static func decode(
        json: UnsafeRawBufferPointer, as type: Tensor.DataType, shape: [Int], count: Int, input: String
    ) throws(Refusal) -> Data {
        guard let size = type.size, let datatype = datatype(type) else {
            throw Refusal(description: "Input \"\(input)\" is \(type), which JSON data cannot hold here.")
        }
        var bytes = [UInt8](repeating: 0, count: count * size)
        var scanner = DataScanner(text: json, shape: shape, count: count, input: input)
        var refusal: Refusal?
        bytes.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            do throws(Refusal) {
                try scanner.scan { (token, index) throws(Refusal) in
                    try write(
                        token, as: type, datatype: datatype.name, at: index * size, into: buffer, index: index,
                        input: input)
                }
            } catch {
                refusal = error
            }
        }
        if let refusal { throw refusal }
        guard scanner.written == count else {
            throw Refusal(
                description:
                    "Input \"\(input)\" has \(scanner.written) values; its shape \(shown(shape)) needs \(count).")
        }
        return Data(bytes)
    }

    /// `[1, 224, 224, 3]`.
    package static func shown(_ shape: [Int]) -> String {
        shape.count > 16
            ? "[" + shape.prefix(16).map(String.init).joined(separator: ", ") + ", ...]"
            : "[" + shape.map(String.init).joined(separator: ", ") + "]"
    }

    /// A token's text for messages, shortened.
    package static func text(_ token: UnsafeRawBufferPointer) -> String {
        let text = String(decoding: token.prefix(40), as: UTF8.self)
        return token.count > 40 ? text + "..." : text
    }

    /// Writes one value (a number token, or `true`/`false`) as element `index`.
    package static func write(
        _ token: UnsafeRawBufferPointer, as type: Tensor.DataType, datatype: String, at offset: Int,
        into buffer: UnsafeMutableRawBufferPointer, index: Int, input: String
    ) throws(Refusal) {
        func refuse(_ why: String) -> Refusal {
            Refusal(description: "Input \"\(input)\": \(text(token)) at index \(index) \(why)")
        }
        func store<T: FixedWidthInteger>(_ value: T) {
            buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        }
        let first = token.first ?? 0
        if first == UInt8(ascii: "t") || first == UInt8(ascii: "f") {
            guard type == .bool else { throw refuse("is not a number, as \(datatype) needs.") }
            store(UInt8(first == UInt8(ascii: "t") ? 1 : 0))
            return
        }
        guard let number = JSONNumber(token) else {
            throw refuse(
                type == .bool
                    ? "is not true, false, 0 or 1, as BOOL needs."
                    : "is not a number, as \(datatype) needs (JSON has no NaN or Infinity).")
        }
        func integer<T: FixedWidthInteger>(_: T.Type) throws(Refusal) -> T {
            guard let value = number.integer(T.self) else {
                if !number.isWhole { throw refuse("is not a whole number, as \(datatype) needs.") }
                throw refuse("is outside \(datatype)'s range, \(T.min) to \(T.max).")
            }
            return value
        }
        switch type {
        case .bool:
            let value = try integer(UInt8.self)
            guard value <= 1 else { throw refuse("is not true, false, 0 or 1, as BOOL needs.") }
            store(value)
        case .uInt8: store(try integer(UInt8.self))
        case .int8: store(try integer(Int8.self))
        case .uInt16: store(try integer(UInt16.self))
        case .int16: store(try integer(Int16.self))
        case .uInt32: store(try integer(UInt32.self))
        case .int32: store(try integer(Int32.self))
        case .uInt64: store(try integer(UInt64.self))
        case .int64: store(try integer(Int64.self))
        case .float32:
            guard let value = Float(number.text), value.isFinite else {
                throw refuse(
                    "is outside FP32's range, \(-Float.greatestFiniteMagnitude) to \(Float.greatestFiniteMagnitude).")
            }
            store(value.bitPattern)
        case .float64:
            guard let value = Double(number.text), value.isFinite else {
                throw refuse(
                    "is outside FP64's range, \(-Double.greatestFiniteMagnitude) to \(Double.greatestFiniteMagnitude).")
            }
            store(value.bitPattern)
        case .float16:
            guard let value = Float(number.text), let half = HalfPrecision.float16(value) else {
                throw refuse("is outside FP16's range, -65504 to 65504.")
            }
            store(half)
        case .bFloat16:
            guard let value = Float(number.text), let half = HalfPrecision.bFloat16(value) else {
                throw refuse("is outside BF16's range, -3.3895314e+38 to 3.3895314e+38.")
            }
            store(half)
        case .string, .complex64:
            throw refuse("cannot be written as \(type).")
        }
    }

    /// A JSON number token, checked against the grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    package struct JSONNumber {
        /// The token as text.
        let text: String
        let negative: Bool
        /// Whether it is a plain integer: no fraction, no exponent.
        let plain: Bool

        init?(_ token: UnsafeRawBufferPointer) {
            var index = 0
            let count = token.count
            func digitsFrom(_ start: Int) -> Int {
                var end = start
                while end < count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(token[end]) { end += 1 }
                return end
            }
            negative = count > 0 && token[0] == UInt8(ascii: "-")
            if negative { index += 1 }
            let integerEnd = digitsFrom(index)
            guard integerEnd > index, token[index] != UInt8(ascii: "0") || integerEnd == index + 1 else { return nil }
            var plain = true
            index = integerEnd
            if index < count, token[index] == UInt8(ascii: ".") {
                let end = digitsFrom(index + 1)
                guard end > index + 1 else { return nil }
                index = end
                plain = false
            }
            if index < count, token[index] == UInt8(ascii: "e") || token[index] == UInt8(ascii: "E") {
                index += 1
                if index < count, token[index] == UInt8(ascii: "+") || token[index] == UInt8(ascii: "-") { index += 1 }
                let end = digitsFrom(index)
                guard end > index else { return nil }
                index = end
                plain = false
            }
            guard index == count else { return nil }
            self.plain = plain
            text = String(decoding: token, as: UTF8.self)
        }

        /// Whether the number is whole (`3`, `3.0`, `3e2`, `-0`).
        var isWhole: Bool {
            if plain { return true }
            guard let value = Double(text) else { return false }
            return value.isFinite && value.rounded(.towardZero) == value
        }

        /// The number as `T` (`nil` when it is not whole or outside `T`'s range).
        ///
        /// Plain integers are read digit by digit (exact past 2^53); others through `Double`.
        func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            if plain {
                var value: T = 0
                for digit in text.utf8.dropFirst(negative ? 1 : 0) {
                    let (shifted, over) = value.multipliedReportingOverflow(by: 10)
                    let step = T(digit - UInt8(ascii: "0"))
                    let (next, over2) =
                        negative ? shifted.subtractingReportingOverflow(step) : shifted.addingReportingOverflow(step)
                    guard !over, !over2 else { return nil }
                    value = next
                }
                return value
            }
            guard let value = Double(text), value.isFinite, value.rounded(.towardZero) == value else { return nil }
            return T(exactly: value)
        }
    }

    /// Walks JSON `data` without recursion: arrays nested as the shape (or flat), values
    /// handed to `body` in order, at most `count` of them.
    package struct DataScanner {
        let text: UnsafeRawBufferPointer
        let shape: [Int]
        let count: Int
        let input: String
        var index = 0
        var written = 0

        init(text: UnsafeRawBufferPointer, shape: [Int], count: Int, input: String) {
            self.text = text
            self.shape = shape
            self.count = count
            self.input = input
        }

        var current: UInt8? { index < text.count ? text[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        func refuse(_ why: String) -> Refusal {
            Refusal(description: "Input \"\(input)\": \(why)")
        }

        /// What stands at `index`, for messages.
        func found() -> String {
            guard current != nil else { return "the end of the data" }
            let rest = UnsafeRawBufferPointer(rebasing: text[index..<min(text.count, index + 20)])
            return "\"" + String(decoding: rest, as: UTF8.self) + "\""
        }

        mutating func scan(_ body: (UnsafeRawBufferPointer, Int) throws(Refusal) -> Void) throws(Refusal) {
            let deepest = max(shape.count, 1)
            // Elements so far in the open array at each depth (1-based), and the depth values
            // were found at (1: flat, shape.count: nested as the shape).
            var elements = [Int](repeating: 0, count: deepest + 1)
            var leafDepth: Int? = nil
            var depth = 0
            skipSpace()
            while true {
                // A value.
                guard let byte = current else { throw refuse("its data ends before its last value.") }
                if byte == UInt8(ascii: "[") {
                    guard depth < deepest, leafDepth.map({ depth < $0 }) ?? true else {
                        throw refuse("its data is nested deeper than its shape \(shown(shape)).")
                    }
                    depth += 1
                    elements[depth] = 0
                    index += 1
                    skipSpace()
                    if current == UInt8(ascii: "]") {
                        try close(&depth, &elements, leafDepth)
                    } else {
                        continue
                    }
                } else {
                    let start = index
                    while let next = current,
                        next != UInt8(ascii: ","), next != UInt8(ascii: "]"), next != UInt8(ascii: "["),
                        next != 0x20, next != 0x09, next != 0x0A, next != 0x0D, index - start < 400
                    {
                        index += 1
                    }
                    let token = UnsafeRawBufferPointer(rebasing: text[start..<index])
                    guard !token.isEmpty, index - start < 400 else {
                        throw refuse(
                            "its data holds \(token.isEmpty ? found() : "a value over 400 characters") where a value belongs."
                        )
                    }
                    if let leafDepth {
                        guard depth == leafDepth else {
                            throw refuse("its data is nested unlike its shape \(shown(shape)) (ragged arrays?).")
                        }
                    } else {
                        guard depth == 1 || depth == shape.count || (depth == 0 && count == 1) else {
                            throw refuse("its data is nested unlike its shape \(shown(shape)).")
                        }
                        leafDepth = depth
                    }
                    guard written < count else {
                        throw Refusal(
                            description:
                                "Input \"\(input)\" has more values than its shape \(shown(shape)) holds (\(count)).")
                    }
                    let first = token[0]
                    guard
                        first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
                            || token.elementsEqual("true".utf8) || token.elementsEqual("false".utf8)
                    else {
                        throw refuse(
                            "\(KServeTensorCodec.text(token)) at index \(written) is not a number (JSON data holds "
                                + "numbers, or true and false for BOOL, in arrays).")
                    }
                    try body(token, written)
                    written += 1
                    if depth > 0 { elements[depth] += 1 }
                }
                // After a value: the end, a comma, or closing brackets.
                while true {
                    skipSpace()
                    if depth == 0 {
                        guard current == nil else { throw refuse("its data has \(found()) after its last value.") }
                        return
                    }
                    if current == UInt8(ascii: ",") {
                        index += 1
                        skipSpace()
                        break
                    }
                    guard current == UInt8(ascii: "]") else {
                        throw refuse("its data has \(found()) where ',' or ']' belongs.")
                    }
                    try close(&depth, &elements, leafDepth)
                }
            }
        }

        /// Closes the array at `depth` (at its `]`): nested data has exactly the shape's count there.
        mutating func close(_ depth: inout Int, _ elements: inout [Int], _ leafDepth: Int?) throws(Refusal) {
            if shape.count > 1, leafDepth == shape.count, elements[depth] != shape[depth - 1] {
                throw refuse(
                    "its data has an array of \(elements[depth]) where its shape \(shown(shape)) needs "
                        + "\(shape[depth - 1]) (ragged arrays?).")
            }
            index += 1
            depth -= 1
            if depth > 0 { elements[depth] += 1 }
        }
    }
}
