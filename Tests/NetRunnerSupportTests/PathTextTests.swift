import Foundation
import Testing

@testable import NetRunnerSupport

/// File names as text, losslessly.
@Suite("PathText")
struct PathTextTests {
    func bytes(of text: String) -> [UInt8] {
        PathText.withCString(text) { pointer in
            Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
        }
    }

    @Test(
        "Any byte string round-trips, and different names never become one string",
        arguments: [
            Array("plain.jpg".utf8), Array("café.jpg".utf8), [0x62, 0x61, 0x64, 0xFF, 0xFE],
            [0x62, 0x61, 0x64, 0xFF, 0xFD],
            [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xC0, 0xAF], Array(0x80...0xFF),
            Array("line\nbreak\r.png".utf8),
        ] as [[UInt8]])
    func roundTrip(name: [UInt8]) {
        let text = PathText.string(fromBytes: name)
        #expect(bytes(of: text) == name)
        if String(validating: name, as: UTF8.self) != nil {
            #expect(text == String(decoding: name, as: UTF8.self), "valid UTF-8 is kept as it is")
        }
    }

    @Test("Names that differ only in invalid bytes stay different")
    func distinct() {
        let first = PathText.string(fromBytes: [0x61, 0xFF, 0xFE])
        let second = PathText.string(fromBytes: [0x61, 0xFF, 0xFD])
        #expect(first != second)
        #expect(
            String(decoding: [0x61, 0xFF, 0xFE], as: UTF8.self) == String(decoding: [0x61, 0xFF, 0xFD], as: UTF8.self))
    }
}
