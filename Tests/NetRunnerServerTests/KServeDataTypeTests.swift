import Testing

@testable import NetRunnerServer
@testable import TensorFlowLite

/// KServe v2's datatype names for the element types of TensorFlow Lite tensors.
@Suite("KServe datatypes")
struct KServeDataTypeTests {
    @Test(
        "Each LiteRT type KServe has a name for is named as Triton names it",
        arguments: [
            (Tensor.DataType.bool, "BOOL"), (.uInt8, "UINT8"), (.uInt16, "UINT16"), (.uInt32, "UINT32"),
            (.uInt64, "UINT64"), (.int8, "INT8"), (.int16, "INT16"), (.int32, "INT32"), (.int64, "INT64"),
            (.float16, "FP16"), (.float32, "FP32"), (.float64, "FP64"), (.string, "BYTES"),
        ] as [(Tensor.DataType, String)])
    func names(type: Tensor.DataType, name: String) {
        #expect(KServeRoutes.datatype(type) == name)
    }
}
