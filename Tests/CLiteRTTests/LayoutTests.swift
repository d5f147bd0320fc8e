import CLiteRT
import Testing

/// The C structs NetRunner declares must have the layouts of LiteRT 2.3.0's own headers on
/// x86_64 (see shared/docs/litert-runtime.md): a mismatch would corrupt every call.
@Suite("CLiteRT struct layouts and constants match LiteRT 2.3.0")
struct LayoutTests {
    @Test("NRLiteRtLayout: 68 bytes, dimensions at 4, strides at 36")
    func layout() {
        #expect(MemoryLayout<NRLiteRtLayout>.size == 68)
        #expect(MemoryLayout<NRLiteRtLayout>.offset(of: \.rank_and_flags) == 0)
        #expect(MemoryLayout<NRLiteRtLayout>.offset(of: \.dimensions) == 4)
        #expect(MemoryLayout<NRLiteRtLayout>.offset(of: \.strides) == 36)
        #expect(MemoryLayout.size(ofValue: NRLiteRtLayout().dimensions) == 4 * Int(NR_LITERT_TENSOR_MAX_RANK))
    }

    @Test("NRLiteRtRankedTensorType: 72 bytes, the layout at 4")
    func rankedTensorType() {
        #expect(MemoryLayout<NRLiteRtRankedTensorType>.size == 72)
        #expect(MemoryLayout<NRLiteRtRankedTensorType>.offset(of: \.element_type) == 0)
        #expect(MemoryLayout<NRLiteRtRankedTensorType>.offset(of: \.layout) == 4)
    }

    @Test("NRLiteRtQuantizationPerTensor: 16 bytes, zero_point at 8")
    func perTensor() {
        #expect(MemoryLayout<NRLiteRtQuantizationPerTensor>.size == 16)
        #expect(MemoryLayout<NRLiteRtQuantizationPerTensor>.offset(of: \.scale) == 0)
        #expect(MemoryLayout<NRLiteRtQuantizationPerTensor>.offset(of: \.zero_point) == 8)
    }

    @Test("NRLiteRtQuantizationPerChannel: 32 bytes: axis, channel count, scales, zero points")
    func perChannel() {
        #expect(MemoryLayout<NRLiteRtQuantizationPerChannel>.size == 32)
        #expect(MemoryLayout<NRLiteRtQuantizationPerChannel>.offset(of: \.quantized_dimension) == 0)
        #expect(MemoryLayout<NRLiteRtQuantizationPerChannel>.offset(of: \.num_channels) == 8)
        #expect(MemoryLayout<NRLiteRtQuantizationPerChannel>.offset(of: \.scales) == 16)
        #expect(MemoryLayout<NRLiteRtQuantizationPerChannel>.offset(of: \.zero_points) == 24)
    }

    @Test("NRLiteRtAny: 16 bytes; NRLiteRtEnvOption: 24 bytes, its value at 8")
    func anyAndEnvironmentOption() {
        #expect(MemoryLayout<NRLiteRtAny>.size == 16)
        #expect(MemoryLayout<NRLiteRtAny>.offset(of: \.type) == 0)
        #expect(MemoryLayout<NRLiteRtEnvOption>.size == 24)
        #expect(MemoryLayout<NRLiteRtEnvOption>.offset(of: \.tag) == 0)
        #expect(MemoryLayout<NRLiteRtEnvOption>.offset(of: \.value) == 8)
        var any = NRLiteRtAny()
        any.int_value = 0x0102_0304_0506_0708
        #expect(any.int_value == 0x0102_0304_0506_0708)
    }

    @Test("Handles and indices are pointer-sized")
    func handles() {
        #expect(MemoryLayout<NRLiteRtParamIndex>.size == 8)
        #expect(MemoryLayout<NRLiteRtStatus>.size == 4)
        #expect(MemoryLayout<NRLiteRtModel?>.size == 8)
        #expect(MemoryLayout<NRLiteRtCompiledModel?>.size == 8)
    }

    @Test("Status codes, type ids, options and accelerator bits are LiteRT's values")
    func constants() {
        #expect(NRLiteRtStatusOk == 0)
        #expect(NRLiteRtStatusInvalidArgument == 1)
        #expect(NRLiteRtStatusMemoryAllocationFailure == 2)
        #expect(NRLiteRtStatusRuntimeFailure == 3)
        #expect(NRLiteRtStatusMissingInputTensor == 4)
        #expect(NRLiteRtStatusUnsupported == 5)
        #expect(NRLiteRtStatusNotFound == 6)
        #expect(NRLiteRtStatusTimeoutExpired == 7)
        #expect(NRLiteRtStatusWrongVersion == 8)
        #expect(NRLiteRtStatusUnknown == 9)
        #expect(NRLiteRtStatusAlreadyExists == 10)
        #expect(NRLiteRtStatusFileIO == 500)
        #expect(NRLiteRtStatusInvalidFlatbuffer == 501)
        #expect(NRLiteRtStatusDynamicLoading == 502)
        #expect(NRLiteRtStatusSerialization == 503)
        #expect(NRLiteRtStatusCompilation == 504)
        #expect(NRLiteRtStatusIndexOOB == 1000)
        #expect(NRLiteRtStatusInvalidIrType == 1001)
        #expect(NRLiteRtStatusInvalidGraphInvariant == 1002)
        #expect(NRLiteRtStatusGraphModification == 1003)
        #expect(NRLiteRtQuantizationNone == 0)
        #expect(NRLiteRtQuantizationPerTensorId == 1)
        #expect(NRLiteRtQuantizationPerChannelId == 2)
        #expect(NRLiteRtQuantizationBlockWise == 3)
        #expect(NRLiteRtRankedTensorTypeId == 0)
        #expect(NRLiteRtUnrankedTensorTypeId == 1)
        #expect(NRLiteRtEnvOptionAutoRegisterAccelerators == 24)
        #expect(NRLiteRtHwAcceleratorCpu == 1)
        #expect(NRLiteRtTensorBufferLockRead == 0)
        #expect(NRLiteRtTensorBufferLockWrite == 1)
        #expect(NRLiteRtTensorBufferLockReadWrite == 2)
        #expect(NR_LITERT_TENSOR_MAX_RANK == 8)
        #expect(NR_LITERT_HOST_MEMORY_ALIGNMENT == 64)
    }
}
