// CLiteRT: NetRunner's own declarations of the LiteRT 2.x C API (as shipped in
// libLiteRt.so of the PyPI wheel ai-edge-litert==2.3.0) and a dlopen loader.
//
// Nothing here links against LiteRT: the library is opened at run time with
// dlopen(RTLD_NOW | RTLD_LOCAL) and every function is resolved with dlsym into
// the table `NRLiteRtAPI`. A machine without the runtime still builds.
//
// Layouts and values were checked against the runtime's public headers and on
// x86_64 (Tests/CLiteRTTests asserts the sizes and offsets).

#ifndef NETRUNNER_CLITERT_H
#define NETRUNNER_CLITERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Only the function pointers of the table are annotated (_Nonnull, so Swift calls them
// directly); everything else keeps C's unspecified nullability on purpose.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wnullability-completeness"
#endif

// MARK: - Basic types

typedef int NRLiteRtStatus;  // 0 is success; see NRLiteRtStatus* values.
// LiteRtStatus (litert/c/litert_common.h). Swift code compares statuses only in
// Sources/TensorFlowLite/Internal/Status.swift, by these names.
enum {
  NRLiteRtStatusOk = 0,
  // Generic errors.
  NRLiteRtStatusInvalidArgument = 1,
  NRLiteRtStatusMemoryAllocationFailure = 2,
  NRLiteRtStatusRuntimeFailure = 3,
  NRLiteRtStatusMissingInputTensor = 4,
  NRLiteRtStatusUnsupported = 5,
  NRLiteRtStatusNotFound = 6,
  NRLiteRtStatusTimeoutExpired = 7,
  NRLiteRtStatusWrongVersion = 8,
  NRLiteRtStatusUnknown = 9,
  NRLiteRtStatusAlreadyExists = 10,
  // File and loading errors.
  NRLiteRtStatusFileIO = 500,
  NRLiteRtStatusInvalidFlatbuffer = 501,
  NRLiteRtStatusDynamicLoading = 502,
  NRLiteRtStatusSerialization = 503,
  NRLiteRtStatusCompilation = 504,
  // IR errors.
  NRLiteRtStatusIndexOOB = 1000,
  NRLiteRtStatusInvalidIrType = 1001,
  NRLiteRtStatusInvalidGraphInvariant = 1002,
  NRLiteRtStatusGraphModification = 1003,
};

typedef size_t NRLiteRtParamIndex;

// Opaque handles.
typedef struct NRLiteRtEnvironmentT *NRLiteRtEnvironment;
typedef struct NRLiteRtModelT *NRLiteRtModel;
typedef struct NRLiteRtSignatureT *NRLiteRtSignature;
typedef struct NRLiteRtSubgraphT *NRLiteRtSubgraph;
typedef struct NRLiteRtTensorT *NRLiteRtTensor;
typedef struct NRLiteRtOptionsT *NRLiteRtOptions;
typedef struct NRLiteRtOpaqueOptionsT *NRLiteRtOpaqueOptions;
typedef struct NRLiteRtCompiledModelT *NRLiteRtCompiledModel;
typedef struct NRLiteRtTensorBufferT *NRLiteRtTensorBuffer;

#define NR_LITERT_TENSOR_MAX_RANK 8
#define NR_LITERT_HOST_MEMORY_ALIGNMENT 64

/// 68 bytes: rank:7 and has_strides:1 share one uint32, then the dimensions.
typedef struct {
  uint32_t rank_and_flags;
  int32_t dimensions[NR_LITERT_TENSOR_MAX_RANK];
  uint32_t strides[NR_LITERT_TENSOR_MAX_RANK];
} NRLiteRtLayout;

/// 72 bytes: element type (TfLiteType numbering) then the layout at offset 4.
typedef struct {
  int32_t element_type;
  NRLiteRtLayout layout;
} NRLiteRtRankedTensorType;

typedef struct {
  float scale;
  int64_t zero_point;
} NRLiteRtQuantizationPerTensor;

typedef struct {
  int32_t quantized_dimension;
  uint64_t num_channels;
  float *scales;         // owned by the model
  int64_t *zero_points;  // owned by the model
} NRLiteRtQuantizationPerChannel;

enum {
  NRLiteRtQuantizationNone = 0,
  NRLiteRtQuantizationPerTensorId = 1,
  NRLiteRtQuantizationPerChannelId = 2,
  NRLiteRtQuantizationBlockWise = 3,
};

enum {
  NRLiteRtRankedTensorTypeId = 0,
  NRLiteRtUnrankedTensorTypeId = 1,
};

typedef struct {
  int32_t type;  // 0 none, 1 bool, 2 int, 3 real, 8 string, 9 pointer
  union {
    bool bool_value;
    int64_t int_value;
    double real_value;
    const char *str_value;
    const void *ptr_value;
  };
} NRLiteRtAny;

typedef struct {
  int32_t tag;
  NRLiteRtAny value;
} NRLiteRtEnvOption;

enum {
  NRLiteRtEnvOptionRuntimeLibraryDir = 22,
  NRLiteRtEnvOptionAutoRegisterAccelerators = 24,
  NRLiteRtEnvOptionMinLoggerSeverity = 25,
};

enum {
  NRLiteRtHwAcceleratorCpu = 1,
  NRLiteRtHwAcceleratorGpu = 2,
  NRLiteRtTensorBufferLockRead = 0,
  NRLiteRtTensorBufferLockWrite = 1,
  NRLiteRtTensorBufferLockReadWrite = 2,
};

typedef void (*NRLiteRtDeallocator)(void *);

// MARK: - The function table

/// Every LiteRT function NetRunner calls, resolved from libLiteRt.so.
typedef struct {
  NRLiteRtStatus (*_Nonnull CreateEnvironment)(int, const NRLiteRtEnvOption *, NRLiteRtEnvironment *);
  void (*_Nonnull DestroyEnvironment)(NRLiteRtEnvironment);

  NRLiteRtStatus (*_Nonnull CreateModelFromBuffer)(NRLiteRtEnvironment, const void *, size_t, NRLiteRtModel *);
  void (*_Nonnull DestroyModel)(NRLiteRtModel);
  NRLiteRtStatus (*_Nonnull GetNumModelSignatures)(NRLiteRtModel, NRLiteRtParamIndex *);
  NRLiteRtStatus (*_Nonnull GetModelSignature)(NRLiteRtModel, NRLiteRtParamIndex, NRLiteRtSignature *);
  NRLiteRtStatus (*_Nonnull GetModelMetadata)(NRLiteRtModel, const char *, const void **, size_t *);

  NRLiteRtStatus (*_Nonnull GetSignatureKey)(NRLiteRtSignature, const char **);
  NRLiteRtStatus (*_Nonnull GetNumSignatureInputs)(NRLiteRtSignature, NRLiteRtParamIndex *);
  NRLiteRtStatus (*_Nonnull GetNumSignatureOutputs)(NRLiteRtSignature, NRLiteRtParamIndex *);
  NRLiteRtStatus (*_Nonnull GetSignatureInputName)(NRLiteRtSignature, NRLiteRtParamIndex, const char **);
  NRLiteRtStatus (*_Nonnull GetSignatureOutputName)(NRLiteRtSignature, NRLiteRtParamIndex, const char **);
  NRLiteRtStatus (*_Nonnull GetSignatureInputTensorByIndex)(NRLiteRtSignature, NRLiteRtParamIndex, NRLiteRtTensor *);
  NRLiteRtStatus (*_Nonnull GetSignatureOutputTensorByIndex)(NRLiteRtSignature, NRLiteRtParamIndex, NRLiteRtTensor *);
  NRLiteRtStatus (*_Nonnull GetSignatureSubgraph)(NRLiteRtSignature, NRLiteRtSubgraph *);

  NRLiteRtStatus (*_Nonnull GetNumModelSubgraphs)(NRLiteRtModel, NRLiteRtParamIndex *);
  NRLiteRtStatus (*_Nonnull GetModelSubgraph)(NRLiteRtModel, NRLiteRtParamIndex, NRLiteRtSubgraph *);
  NRLiteRtStatus (*_Nonnull GetMainModelSubgraphIndex)(NRLiteRtModel, NRLiteRtParamIndex *);
  NRLiteRtStatus (*_Nonnull GetNumSubgraphInputs)(NRLiteRtSubgraph, NRLiteRtParamIndex *);
  NRLiteRtStatus (*_Nonnull GetNumSubgraphOutputs)(NRLiteRtSubgraph, NRLiteRtParamIndex *);
  NRLiteRtStatus (*_Nonnull GetSubgraphInput)(NRLiteRtSubgraph, NRLiteRtParamIndex, NRLiteRtTensor *);
  NRLiteRtStatus (*_Nonnull GetSubgraphOutput)(NRLiteRtSubgraph, NRLiteRtParamIndex, NRLiteRtTensor *);

  NRLiteRtStatus (*_Nonnull GetTensorName)(NRLiteRtTensor, const char **);
  NRLiteRtStatus (*_Nonnull GetTensorTypeId)(NRLiteRtTensor, int32_t *);
  NRLiteRtStatus (*_Nonnull GetRankedTensorType)(NRLiteRtTensor, NRLiteRtRankedTensorType *);
  NRLiteRtStatus (*_Nonnull GetQuantizationTypeId)(NRLiteRtTensor, int32_t *);
  NRLiteRtStatus (*_Nonnull GetPerTensorQuantization)(NRLiteRtTensor, NRLiteRtQuantizationPerTensor *);
  NRLiteRtStatus (*_Nonnull GetPerChannelQuantization)(NRLiteRtTensor, NRLiteRtQuantizationPerChannel *);

  NRLiteRtStatus (*_Nonnull CreateOptions)(NRLiteRtOptions *);
  void (*_Nonnull DestroyOptions)(NRLiteRtOptions);
  NRLiteRtStatus (*_Nonnull SetOptionsHardwareAccelerators)(NRLiteRtOptions, int);
  NRLiteRtStatus (*_Nonnull CreateOpaqueOptions)(const char *, void *, NRLiteRtDeallocator, NRLiteRtOpaqueOptions *);
  void (*_Nonnull DestroyOpaqueOptions)(NRLiteRtOpaqueOptions);
  NRLiteRtStatus (*_Nonnull AddOpaqueOptions)(NRLiteRtOptions, NRLiteRtOpaqueOptions);

  NRLiteRtStatus (*_Nonnull CreateCompiledModel)(NRLiteRtEnvironment, NRLiteRtModel, NRLiteRtOptions, NRLiteRtCompiledModel *);
  void (*_Nonnull DestroyCompiledModel)(NRLiteRtCompiledModel);
  NRLiteRtStatus (*_Nonnull GetCompiledModelInputTensorLayout)(NRLiteRtCompiledModel, NRLiteRtParamIndex, NRLiteRtParamIndex, NRLiteRtLayout *);
  NRLiteRtStatus (*_Nonnull GetCompiledModelOutputTensorLayouts)(NRLiteRtCompiledModel, NRLiteRtParamIndex, size_t, NRLiteRtLayout *, bool);
  NRLiteRtStatus (*_Nonnull CompiledModelResizeInputTensor)(NRLiteRtCompiledModel, NRLiteRtParamIndex, NRLiteRtParamIndex, const int *, size_t);
  NRLiteRtStatus (*_Nonnull CompiledModelResizeInputTensorNonStrict)(NRLiteRtCompiledModel, NRLiteRtParamIndex, NRLiteRtParamIndex, const int *, size_t);
  NRLiteRtStatus (*_Nonnull CompiledModelIsFullyAccelerated)(NRLiteRtCompiledModel, bool *);
  NRLiteRtStatus (*_Nonnull RunCompiledModel)(NRLiteRtCompiledModel, NRLiteRtParamIndex, size_t, NRLiteRtTensorBuffer *, size_t, NRLiteRtTensorBuffer *);

  NRLiteRtStatus (*_Nonnull CreateTensorBufferFromHostMemory)(const NRLiteRtRankedTensorType *, void *, size_t, NRLiteRtDeallocator, NRLiteRtTensorBuffer *);
  void (*_Nonnull DestroyTensorBuffer)(NRLiteRtTensorBuffer);
} NRLiteRtAPI;

// MARK: - Loader

/// Opens the shared library at `path` and resolves every function of the table.
///
/// Returns the table (valid for the life of the process) or NULL; on NULL,
/// `error` (if not NULL) receives a one-line reason of at most `error_size` bytes.
/// The first successful call wins: later calls return the same table, whatever
/// their path. Thread-safe.
const NRLiteRtAPI *nr_litert_load(const char *path, char *error, size_t error_size);

/// The table loaded by an earlier successful `nr_litert_load`, or NULL.
const NRLiteRtAPI *nr_litert_api(void);

/// The path `nr_litert_load` succeeded with, or NULL.
const char *nr_litert_loaded_path(void);

/// The folder of the file the loaded library really is (a bare name the system's search path
/// resolved included), without a trailing slash; NULL before a load or when it cannot be told.
/// LiteRT looks for its GPU accelerator library there.
const char *nr_litert_loaded_folder(void);

/// Opens the Vulkan loader (`libvulkan.so.1`) and keeps it open. Returns 1 when it is there,
/// else 0 with the loader's reason in `error` (if not NULL, at most `error_size` bytes).
int nr_vulkan_loader_open(char *error, size_t error_size);

// MARK: - Runtime output capture

/// Takes the process-wide capture lock and starts capturing everything written to
/// file descriptor 2 into an anonymous file, so the runtime's log lines can be
/// filtered or attached to an error. Returns a token (>= 0), or -1 if capture
/// could not start (stderr is then untouched). Either way, the caller must call
/// `nr_stderr_capture_end` with the token, which releases the lock. Captures by
/// one thread must not nest.
int nr_stderr_capture_begin(void);

/// Writes `count` bytes to file descriptor 2 under the capture lock, so the text never lands in
/// a capture another thread has open (it waits for that capture to end). Retries short writes
/// and EINTR; gives up silently on any other error.
void nr_stderr_write(const void *bytes, size_t count);

/// Restores stderr, releases the capture lock, and returns the captured bytes as
/// a malloc'ed NUL-terminated string (the caller frees it), or NULL if nothing
/// was captured.
char *nr_stderr_capture_end(int token);

/// Starts capturing file descriptor 1 into an anonymous file (the GPU accelerator's start-up
/// prints a line to stdout with printf, where a command's results go). Returns a token (>= 0) or
/// -1 (stdout untouched). Pair with `nr_stdout_capture_end`; captures do not nest.
int nr_stdout_capture_begin(void);

/// Flushes the C library's stdout buffer into the capture, restores stdout and returns the
/// captured bytes as a malloc'ed NUL-terminated string (the caller frees it), or NULL.
char *nr_stdout_capture_end(int token);

/// Writes `count` bytes to file descriptor 1 (short writes and EINTR retried).
void nr_stdout_write(const void *bytes, size_t count);

/// An anonymous, close-on-exec file (memfd) to collect a child process's output;
/// returns its descriptor or -1.
int nr_anonymous_file(const char *name);

#ifdef __cplusplus
}
#endif

#endif  // NETRUNNER_CLITERT_H
