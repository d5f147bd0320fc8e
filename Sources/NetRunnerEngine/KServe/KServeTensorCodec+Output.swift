package import FoundationEssentials
package import TensorFlowLite

extension KServeTensorCodec {
    // MARK: JSON data out

    /// Appends a tensor's elements to `text` as a flat JSON array (KServe's row-major `data`):
    /// numbers, `true`/`false` for `BOOL`, strings for `BYTES`; NaN and infinities as Triton
    /// writes them (`NaN`, `Infinity`, `-Infinity`).
    ///
    /// - Parameters:
    ///   - data: The tensor's bytes, little-endian.
    ///   - type: Its element type.
    ///   - text: Where the array is written.
    /// - Throws: ``Refusal`` for `complex64`, and a string tensor whose buffer is malformed.
    package static func appendJSON(_ data: Data, as type: Tensor.DataType, to text: inout [UInt8]) throws(Refusal) {
        if type == .string {
            guard let elements = strings(data) else {
                throw Refusal(description: "A string output of the model is not a valid TensorFlow Lite string buffer.")
            }
            text.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                appendString(element, to: &text)
            }
            text.append(UInt8(ascii: "]"))
            return
        }
        guard let size = type.size, datatype(type) != nil else {
            throw Refusal(description: "An output of the model is \(type), which KServe v2 has no datatype for.")
        }
        let count = data.count / size
        text.reserveCapacity(text.count + count * 4 + 2)
        text.append(UInt8(ascii: "["))
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            func load<T: FixedWidthInteger>(_: T.Type, _ index: Int) -> T {
                T(littleEndian: raw.loadUnaligned(fromByteOffset: index * size, as: T.self))
            }
            for index in 0..<count {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                switch type {
                case .bool: text.append(contentsOf: (load(UInt8.self, index) != 0 ? "true" : "false").utf8)
                case .uInt8: appendInteger(load(UInt8.self, index), to: &text)
                case .int8: appendInteger(load(Int8.self, index), to: &text)
                case .uInt16: appendInteger(load(UInt16.self, index), to: &text)
                case .int16: appendInteger(load(Int16.self, index), to: &text)
                case .uInt32: appendInteger(load(UInt32.self, index), to: &text)
                case .int32: appendInteger(load(Int32.self, index), to: &text)
                case .uInt64: appendInteger(load(UInt64.self, index), to: &text)
                case .int64: appendInteger(load(Int64.self, index), to: &text)
                case .float16: appendReal(HalfPrecision.float(fromFloat16: load(UInt16.self, index)), to: &text)
                case .bFloat16:
                    appendReal(HalfPrecision.float(fromBFloat16: load(UInt16.self, index)), to: &text)
                case .float32: appendReal(Float(bitPattern: load(UInt32.self, index)), to: &text)
                case .float64: appendReal(Double(bitPattern: load(UInt64.self, index)), to: &text)
                case .string, .complex64: break
                }
            }
        }
        text.append(UInt8(ascii: "]"))
    }

    package static func appendInteger(_ value: some FixedWidthInteger, to text: inout [UInt8]) {
        text.append(contentsOf: String(value).utf8)
    }

    /// A finite number as Swift writes it shortest for its type (valid JSON: `0.1`, `1e-05`),
    /// else Triton's literals.
    package static func appendReal<Real: BinaryFloatingPoint & LosslessStringConvertible>(
        _ value: Real, to text: inout [UInt8]
    ) {
        if value.isNaN {
            text.append(contentsOf: "NaN".utf8)
        } else if value.isInfinite {
            text.append(contentsOf: (value < 0 ? "-Infinity" : "Infinity").utf8)
        } else {
            text.append(contentsOf: value.description.utf8)
        }
    }

    /// Appends `bytes` as a JSON string (invalid UTF-8 replaced), escaped.
    package static func appendString(_ bytes: some Sequence<UInt8>, to text: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        text.append(UInt8(ascii: "\""))
        for scalar in String(decoding: Array(bytes), as: UTF8.self).utf8 {
            switch scalar {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                text.append(UInt8(ascii: "\\"))
                text.append(scalar)
            case 0..<0x20:
                text.append(contentsOf: "\\u00".utf8)
                text.append(hex[Int(scalar >> 4)])
                text.append(hex[Int(scalar & 0xF)])
            default:
                text.append(scalar)
            }
        }
        text.append(UInt8(ascii: "\""))
    }

    /// The elements of a TensorFlow Lite string tensor (a count, count + 1 offsets from the
    /// buffer's start, then the bytes), or `nil` when the buffer is malformed.
    package static func strings(_ data: Data) -> [[UInt8]]? {
        let bytes = [UInt8](data)
        func int32(at offset: Int) -> Int? {
            guard offset >= 0, offset + 4 <= bytes.count else { return nil }
            return bytes.withUnsafeBytes {
                Int(Int32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
            }
        }
        guard let count = int32(at: 0), count >= 0, count <= (bytes.count - 4) / 4 else { return nil }
        var elements: [[UInt8]] = []
        elements.reserveCapacity(count)
        for index in 0..<count {
            guard let start = int32(at: 4 + 4 * index), let end = int32(at: 8 + 4 * index), start >= 0,
                start <= end, end <= bytes.count
            else { return nil }
            elements.append(Array(bytes[start..<end]))
        }
        return elements
    }

    /// KServe's binary form of `BYTES` elements: each one's length (4 bytes, little-endian), then its bytes.
    package static func binary(_ elements: [[UInt8]]) -> Data {
        var data = Data()
        for element in elements {
            withUnsafeBytes(of: UInt32(element.count).littleEndian) { data.append(contentsOf: $0) }
            data.append(contentsOf: element)
        }
        return data
    }
}
