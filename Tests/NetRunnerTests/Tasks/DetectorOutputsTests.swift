import Foundation
import Testing

@testable import NetRunner
@testable import TensorFlowLite

/// SSD outputs are found by name (the tensors' or the metadata's) and shape, never by
/// position: converters list them as classes, count, boxes, scores as often as in order.
@Suite("Resolving detector outputs")
struct DetectorOutputsTests {
    func tensor(_ name: String, _ shape: [Int]) -> Tensor {
        Tensor(name: name, dataType: .float32, shape: Tensor.Shape(shape), data: Data())
    }

    @Test("TFLite_Detection_PostProcess names, in the converter's shuffled order")
    func postProcessNames() throws {
        let outputs = [
            tensor("TFLite_Detection_PostProcess:1", [1, 10]), tensor("TFLite_Detection_PostProcess:3", [1]),
            tensor("TFLite_Detection_PostProcess", [1, 10, 4]), tensor("TFLite_Detection_PostProcess:2", [1, 10]),
        ]
        #expect(try DetectorOutputs.resolve(outputs, model: "m") == .ssd(boxes: 2, classes: 0, scores: 3, count: 1))
    }

    @Test("Opaque tensor names resolved by the Task Library's metadata names")
    func metadataNames() throws {
        let outputs = (0..<4).map {
            tensor("StatefulPartitionedCall:\($0)", [[1, 10], [1], [1, 10, 4], [1, 10]][$0])
        }
        let names = ["category", "number of detections", "location", "score"]
        #expect(
            try DetectorOutputs.resolve(outputs, metadataNames: names, model: "m")
                == .ssd(boxes: 2, classes: 0, scores: 3, count: 1))
    }

    @Test("Raw anchor outputs, and shapes that do not agree")
    func anchorsAndErrors() throws {
        let raw = [tensor("classificators", [1, 896, 1]), tensor("regressors", [1, 896, 16])]
        #expect(
            try DetectorOutputs.resolve(raw, model: "m")
                == .anchors(regressors: 1, scores: 0, anchorCount: 896, coordinates: 16))
        let broken = [
            tensor("boxes", [1, 10, 4]), tensor("classes", [1, 12]), tensor("scores", [1, 10]), tensor("count", [1]),
        ]
        #expect(throws: NetRunnerError.self) { try DetectorOutputs.resolve(broken, model: "m") }
        #expect(throws: NetRunnerError.self) { try DetectorOutputs.resolve([tensor("x", [1, 10])], model: "m") }
    }
}
