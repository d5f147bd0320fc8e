import NetRunnerTestSupport
import Testing

@testable import NetRunner

@Suite("Labels files")
struct LabelMapTests {
    @Test("The ImageNet labels file has 1000 labels for MobileNetV2's 1000 classes")
    func imagenet() throws {
        let labels = try LabelMap(contentsOfFile: Fixtures.path(Fixtures.MobileNet.labels), classCount: 1000)
        #expect(labels.count == 1000)
        #expect(labels[285] == "Egyptian cat")
        #expect(labels.displayName(0) == "tench")
        #expect(labels[0] == "tench, Tinca tinca")
        #expect(labels[1000] == nil)
        #expect(labels.displayName(-1) == nil)
    }

    @Test("A leading background label is dropped when it makes the count fit (the 1001-label convention)")
    func background() throws {
        let labels = try LabelMap(text: "background\ncat\ndog\n", classCount: 2)
        #expect(labels.labels == ["cat", "dog"])
        let unknown = try LabelMap(text: "???\ncat\ndog", classCount: 2)
        #expect(unknown.labels == ["cat", "dog"])
        // Without a class count, nothing is dropped: index 0 stays "background" (SSD's label offset).
        #expect(try LabelMap(text: "background\ncat\ndog\n").labels == ["background", "cat", "dog"])
    }

    @Test("Windows line endings and trailing blank lines are tolerated")
    func lineEndings() throws {
        let labels = try LabelMap(text: "cat\r\ndog\r\n\r\n\n", classCount: 2)
        #expect(labels.labels == ["cat", "dog"])
    }

    @Test("A labels file of the wrong length is an error naming the file and both counts")
    func mismatch() {
        #expect(throws: NetRunnerError.labelCountMismatch(file: "labels.txt", labels: 3, classes: 1000)) {
            try LabelMap(text: "a\nb\nc\n", source: "labels.txt", classCount: 1000)
        }
        let message = NetRunnerError.labelCountMismatch(file: "labels.txt", labels: 3, classes: 1000).description
        #expect(
            message
                == "labels.txt has 3 labels but the model has 1000 classes; use the labels file made for this model.")
    }

    @Test("A missing labels file is an error naming it")
    func missing() {
        #expect(
            throws: NetRunnerError.unreadableLabels(
                file: "/nonexistent/labels.txt", reason: "No such file or directory")
        ) {
            try LabelMap(contentsOfFile: "/nonexistent/labels.txt")
        }
    }
}
