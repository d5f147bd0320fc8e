import Foundation
import Testing

@testable import NetRunner

@Suite("Score calibration")
struct ScoreCalibrationTests {
    @Test("Each class's sigmoid, the minimum score, the default score and empty lines")
    func calibrate() throws {
        let calibration = try ScoreCalibration(
            text: "1.0,2.0,0.0\n\n0.5,1.0,-1.0,0.3\n", transformation: .identity, defaultScore: 0.01, source: "c.txt")
        #expect(calibration.parameters.count == 3)
        #expect(calibration.calibrate(0, index: 0) == 0.5)
        #expect(abs(calibration.calibrate(0.5, index: 0) - 1 / (1 + expf(-1))) < 1e-6)
        #expect(calibration.calibrate(0.9, index: 1) == 0.01)  // no parameters
        #expect(calibration.calibrate(0.2, index: 2) == 0.01)  // below the minimum score
        #expect(abs(calibration.calibrate(0.8, index: 2) - 0.5 / (1 + expf(0.2))) < 1e-6)
        #expect(calibration.calibrate(0.8, index: 7) == 0.01)  // past the file
        let logistic = try ScoreCalibration(
            text: "1,1,0", transformation: .inverseLogistic, defaultScore: 0, source: "c.txt")
        #expect(abs(logistic.calibrate(0.25, index: 0) - 0.25) < 1e-6)  // sigmoid(logit(x)) = x
        let log = try ScoreCalibration(text: "1,1,0", transformation: .log, defaultScore: 0, source: "c.txt")
        #expect(abs(log.calibrate(0.5, index: 0) - 1 / 3) < 1e-6)  // x / (1 + x)
    }

    @Test("A malformed line is an error naming the file and the line")
    func malformed() {
        #expect(
            throws: NetRunnerError.invalidOption(
                name: "score calibration", reason: "c.txt line 2 is not scale,slope,offset[,min_score]")
        ) {
            try ScoreCalibration(text: "1,1,0\n1,x,0\n", transformation: .identity, defaultScore: 0, source: "c.txt")
        }
    }
}
