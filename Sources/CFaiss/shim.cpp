// The C API of CFaiss.h over FAISS's C++ (see the header).
#include "CFaiss.h"

#include <faiss/AutoTune.h>
#include <faiss/IVFlib.h>
#include <faiss/Index.h>
#include <faiss/IndexIVF.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>

#include <faiss/impl/io.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>

// libgomp's (GCC's OpenMP, which Debian's FAISS is built with); its omp.h is GCC's, not on
// clang's include path.
extern "C" void omp_set_num_threads(int threads);

struct nr_faiss_index {
    std::unique_ptr<faiss::Index> index;
};

namespace {

/// nr_faiss_set_threads's value: 0 leaves OpenMP's default.
std::atomic<int> configured_threads{0};

void copy_error(const char *message, char *error, size_t error_size) {
    if (error == nullptr || error_size == 0) return;
    std::strncpy(error, message, error_size - 1);
    error[error_size - 1] = '\0';
}

/// Runs body; any C++ exception becomes -1 and its message, none crosses into Swift.
template <typename Body>
int guarded(char *error, size_t error_size, Body body) {
    try {
        int threads = configured_threads.load();
        if (threads > 0) omp_set_num_threads(threads);
        body();
        return 0;
    } catch (const std::bad_alloc &) {
        copy_error("FAISS ran out of memory", error, error_size);
    } catch (const std::exception &failure) {
        copy_error(failure.what(), error, error_size);
    } catch (...) {
        copy_error("an unknown C++ exception from FAISS", error, error_size);
    }
    return -1;
}

}  // namespace

extern "C" {

int nr_faiss_factory(int dimension, const char *description, int inner_product, nr_faiss_index **out, char *error,
                     size_t error_size) {
    return guarded(error, error_size, [&] {
        auto metric = inner_product ? faiss::METRIC_INNER_PRODUCT : faiss::METRIC_L2;
        std::unique_ptr<faiss::Index> made(faiss::index_factory(dimension, description, metric));
        *out = new nr_faiss_index{std::move(made)};
    });
}

int nr_faiss_read(const char *path, nr_faiss_index **out, char *error, size_t error_size) {
    return guarded(error, error_size, [&] {
        std::unique_ptr<faiss::Index> read(faiss::read_index(path));
        *out = new nr_faiss_index{std::move(read)};
    });
}

int nr_faiss_write(const nr_faiss_index *index, const char *path, char *error, size_t error_size) {
    return guarded(error, error_size, [&] { faiss::write_index(index->index.get(), path); });
}

int nr_faiss_serialize(const nr_faiss_index *index, uint8_t **bytes, size_t *size, char *error, size_t error_size) {
    return guarded(error, error_size, [&] {
        faiss::VectorIOWriter writer;
        faiss::write_index(index->index.get(), &writer);
        auto *copy = static_cast<uint8_t *>(std::malloc(writer.data.empty() ? 1 : writer.data.size()));
        if (copy == nullptr) throw std::bad_alloc();
        std::memcpy(copy, writer.data.data(), writer.data.size());
        *bytes = copy;
        *size = writer.data.size();
    });
}

void nr_faiss_free_bytes(uint8_t *bytes) { std::free(bytes); }

int nr_faiss_train(nr_faiss_index *index, int64_t n, const float *x, char *error, size_t error_size) {
    return guarded(error, error_size, [&] { index->index->train(n, x); });
}

int nr_faiss_add(nr_faiss_index *index, int64_t n, const float *x, char *error, size_t error_size) {
    return guarded(error, error_size, [&] { index->index->add(n, x); });
}

int nr_faiss_search(const nr_faiss_index *index, int64_t n, const float *x, int64_t k, float *distances,
                    int64_t *labels, char *error, size_t error_size) {
    return guarded(error, error_size, [&] { index->index->search(n, x, k, distances, labels); });
}

int nr_faiss_reconstruct(nr_faiss_index *index, int64_t first, int64_t n, float *x, char *error,
                         size_t error_size) {
    return guarded(error, error_size, [&] {
        if (faiss::IndexIVF *ivf = faiss::ivflib::try_extract_index_ivf(index->index.get())) {
            ivf->make_direct_map(true);
        }
        index->index->reconstruct_n(first, n, x);
    });
}

int nr_faiss_set_parameters(nr_faiss_index *index, const char *parameters, char *error, size_t error_size) {
    return guarded(error, error_size,
                   [&] { faiss::ParameterSpace().set_index_parameters(index->index.get(), parameters); });
}

int64_t nr_faiss_ntotal(const nr_faiss_index *index) { return index->index->ntotal; }

int nr_faiss_dimension(const nr_faiss_index *index) { return index->index->d; }

int nr_faiss_is_trained(const nr_faiss_index *index) { return index->index->is_trained ? 1 : 0; }

int nr_faiss_metric_is_inner_product(const nr_faiss_index *index) {
    return index->index->metric_type == faiss::METRIC_INNER_PRODUCT ? 1 : 0;
}

void nr_faiss_set_threads(int threads) { configured_threads.store(threads > 0 ? threads : 0); }

const char *nr_faiss_version(void) {
#define NR_FAISS_TEXT(x) #x
#define NR_FAISS_VERSION(a, b, c) NR_FAISS_TEXT(a) "." NR_FAISS_TEXT(b) "." NR_FAISS_TEXT(c)
    return NR_FAISS_VERSION(FAISS_VERSION_MAJOR, FAISS_VERSION_MINOR, FAISS_VERSION_PATCH);
}

void nr_faiss_free(nr_faiss_index *index) { delete index; }

}  // extern "C"
