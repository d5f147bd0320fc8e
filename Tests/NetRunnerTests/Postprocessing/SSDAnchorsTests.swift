import Testing

@testable import NetRunner

@Suite("SSD anchors")
struct SSDAnchorsTests {
    @Test("BlazeFace short-range has 896 anchors: 16x16x2 at stride 8, then 8x8x6 at stride 16")
    func blazeFace() {
        let anchors = SSDAnchors(options: .blazeFaceShortRange).anchors
        #expect(anchors.count == 896)
        #expect(anchors[0] == .init(xCenter: 0.5 / 16, yCenter: 0.5 / 16, width: 1, height: 1))
        #expect(anchors[1] == anchors[0])
        #expect(anchors[511] == .init(xCenter: 15.5 / 16, yCenter: 15.5 / 16, width: 1, height: 1))
        #expect(anchors[512] == .init(xCenter: 0.5 / 8, yCenter: 0.5 / 8, width: 1, height: 1))
        #expect(anchors[895] == .init(xCenter: 7.5 / 8, yCenter: 7.5 / 8, width: 1, height: 1))
    }
}
