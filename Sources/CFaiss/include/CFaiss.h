// Our own C API over faiss::Index (Debian's libfaiss-dev ships FAISS's C++ static library only):
// the few calls NetRunner's FaissIndex makes, every C++ exception caught at this boundary.
#ifndef CFAISS_H
#define CFAISS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// An index owned by the caller (nr_faiss_free).
typedef struct nr_faiss_index nr_faiss_index;

// Every call returning int answers 0 on success, or -1 with FAISS's message in `error`
// (NUL-terminated, cut to error_size bytes).

/// faiss::index_factory(dimension, description, inner product or L2).
int nr_faiss_factory(int dimension, const char *description, int inner_product, nr_faiss_index **out, char *error,
                     size_t error_size);
/// faiss::read_index(path).
int nr_faiss_read(const char *path, nr_faiss_index **out, char *error, size_t error_size);
/// faiss::write_index(index, path).
int nr_faiss_write(const nr_faiss_index *index, const char *path, char *error, size_t error_size);
/// The file faiss::write_index writes, in memory: *bytes (size bytes) is the caller's to free
/// with nr_faiss_free_bytes.
int nr_faiss_serialize(const nr_faiss_index *index, uint8_t **bytes, size_t *size, char *error, size_t error_size);
/// Frees what nr_faiss_serialize answered.
void nr_faiss_free_bytes(uint8_t *bytes);
/// Trains on n vectors (n x dimension floats).
int nr_faiss_train(nr_faiss_index *index, int64_t n, const float *x, char *error, size_t error_size);
/// Adds n vectors, their ids the next n.
int nr_faiss_add(nr_faiss_index *index, int64_t n, const float *x, char *error, size_t error_size);
/// The k nearest of each of n queries: n x k distances (inner products or squared L2) and ids
/// (-1 where fewer than k were found).
int nr_faiss_search(const nr_faiss_index *index, int64_t n, const float *x, int64_t k, float *distances,
                    int64_t *labels, char *error, size_t error_size);
/// Stored vectors first..first+n-1 (exact for Flat and HNSW, the decoded codes for PQ; an IVF
/// index gets its direct map made first).
int nr_faiss_reconstruct(nr_faiss_index *index, int64_t first, int64_t n, float *x, char *error,
                         size_t error_size);
/// Search parameters through faiss::ParameterSpace ("efSearch=64", "nprobe=16").
int nr_faiss_set_parameters(nr_faiss_index *index, const char *parameters, char *error, size_t error_size);
/// The number of vectors stored.
int64_t nr_faiss_ntotal(const nr_faiss_index *index);
/// The number of values of each vector.
int nr_faiss_dimension(const nr_faiss_index *index);
/// 1 when the index needs no (more) training.
int nr_faiss_is_trained(const nr_faiss_index *index);
/// 1 for inner product, 0 for any other metric.
int nr_faiss_metric_is_inner_product(const nr_faiss_index *index);
/// The OpenMP threads every later call's FAISS work uses (omp_set_num_threads on the calling
/// thread at the start of each call, since OpenMP's setting is per thread); 0: OpenMP's default.
void nr_faiss_set_threads(int threads);
/// FAISS's version, "1.7.3", from the headers it was built with.
const char *nr_faiss_version(void);
void nr_faiss_free(nr_faiss_index *index);

#ifdef __cplusplus
}
#endif

#endif
