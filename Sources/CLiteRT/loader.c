// The dlopen loader for libLiteRt.so and the stderr capture used to keep the
// runtime's log lines out of the user's terminal.
//
// Invariants: `g_api` is written once, under `g_lock`, only after every symbol
// resolved; after that it is read-only for the life of the process. The library
// handle is never closed (LiteRT keeps threads and static state).

#define _GNU_SOURCE
#include "CLiteRT.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static NRLiteRtAPI g_table;
static const NRLiteRtAPI *volatile g_api = NULL;
static char *g_path = NULL;

static void set_error(char *error, size_t size, const char *fmt, const char *a, const char *b) {
  if (error == NULL || size == 0) return;
  snprintf(error, size, fmt, a, b);
}

#define RESOLVE(field, symbol)                                                   \
  do {                                                                           \
    void *fn = dlsym(handle, symbol);                                            \
    if (fn == NULL) {                                                            \
      set_error(error, error_size, "%s does not export %s (is it LiteRT 2.3?)",  \
                path, symbol);                                                   \
      dlclose(handle);                                                           \
      pthread_mutex_unlock(&g_lock);                                             \
      return NULL;                                                               \
    }                                                                            \
    memcpy(&table.field, &fn, sizeof(fn));                                       \
  } while (0)

const NRLiteRtAPI *nr_litert_load(const char *path, char *error, size_t error_size) {
  if (g_api != NULL) return g_api;
  pthread_mutex_lock(&g_lock);
  if (g_api != NULL) {
    pthread_mutex_unlock(&g_lock);
    return g_api;
  }
  dlerror();
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *reason = dlerror();
    set_error(error, error_size, "%s", reason != NULL ? reason : path, NULL);
    pthread_mutex_unlock(&g_lock);
    return NULL;
  }
  NRLiteRtAPI table;
  memset(&table, 0, sizeof(table));
  RESOLVE(CreateEnvironment, "LiteRtCreateEnvironment");
  RESOLVE(DestroyEnvironment, "LiteRtDestroyEnvironment");
  RESOLVE(CreateModelFromBuffer, "LiteRtCreateModelFromBuffer");
  RESOLVE(DestroyModel, "LiteRtDestroyModel");
  RESOLVE(GetNumModelSignatures, "LiteRtGetNumModelSignatures");
  RESOLVE(GetModelSignature, "LiteRtGetModelSignature");
  RESOLVE(GetModelMetadata, "LiteRtGetModelMetadata");
  RESOLVE(GetSignatureKey, "LiteRtGetSignatureKey");
  RESOLVE(GetNumSignatureInputs, "LiteRtGetNumSignatureInputs");
  RESOLVE(GetNumSignatureOutputs, "LiteRtGetNumSignatureOutputs");
  RESOLVE(GetSignatureInputName, "LiteRtGetSignatureInputName");
  RESOLVE(GetSignatureOutputName, "LiteRtGetSignatureOutputName");
  RESOLVE(GetSignatureInputTensorByIndex, "LiteRtGetSignatureInputTensorByIndex");
  RESOLVE(GetSignatureOutputTensorByIndex, "LiteRtGetSignatureOutputTensorByIndex");
  RESOLVE(GetSignatureSubgraph, "LiteRtGetSignatureSubgraph");
  RESOLVE(GetNumModelSubgraphs, "LiteRtGetNumModelSubgraphs");
  RESOLVE(GetModelSubgraph, "LiteRtGetModelSubgraph");
  RESOLVE(GetMainModelSubgraphIndex, "LiteRtGetMainModelSubgraphIndex");
  RESOLVE(GetNumSubgraphInputs, "LiteRtGetNumSubgraphInputs");
  RESOLVE(GetNumSubgraphOutputs, "LiteRtGetNumSubgraphOutputs");
  RESOLVE(GetSubgraphInput, "LiteRtGetSubgraphInput");
  RESOLVE(GetSubgraphOutput, "LiteRtGetSubgraphOutput");
  RESOLVE(GetTensorName, "LiteRtGetTensorName");
  RESOLVE(GetTensorTypeId, "LiteRtGetTensorTypeId");
  RESOLVE(GetRankedTensorType, "LiteRtGetRankedTensorType");
  RESOLVE(GetQuantizationTypeId, "LiteRtGetQuantizationTypeId");
  RESOLVE(GetPerTensorQuantization, "LiteRtGetPerTensorQuantization");
  RESOLVE(GetPerChannelQuantization, "LiteRtGetPerChannelQuantization");
  RESOLVE(CreateOptions, "LiteRtCreateOptions");
  RESOLVE(DestroyOptions, "LiteRtDestroyOptions");
  RESOLVE(SetOptionsHardwareAccelerators, "LiteRtSetOptionsHardwareAccelerators");
  RESOLVE(CreateOpaqueOptions, "LiteRtCreateOpaqueOptions");
  RESOLVE(DestroyOpaqueOptions, "LiteRtDestroyOpaqueOptions");
  RESOLVE(AddOpaqueOptions, "LiteRtAddOpaqueOptions");
  RESOLVE(CreateCompiledModel, "LiteRtCreateCompiledModel");
  RESOLVE(DestroyCompiledModel, "LiteRtDestroyCompiledModel");
  RESOLVE(GetCompiledModelInputTensorLayout, "LiteRtGetCompiledModelInputTensorLayout");
  RESOLVE(GetCompiledModelOutputTensorLayouts, "LiteRtGetCompiledModelOutputTensorLayouts");
  RESOLVE(CompiledModelResizeInputTensor, "LiteRtCompiledModelResizeInputTensor");
  RESOLVE(CompiledModelResizeInputTensorNonStrict, "LiteRtCompiledModelResizeInputTensorNonStrict");
  RESOLVE(CompiledModelIsFullyAccelerated, "LiteRtCompiledModelIsFullyAccelerated");
  RESOLVE(RunCompiledModel, "LiteRtRunCompiledModel");
  RESOLVE(CreateTensorBufferFromHostMemory, "LiteRtCreateTensorBufferFromHostMemory");
  RESOLVE(DestroyTensorBuffer, "LiteRtDestroyTensorBuffer");
  g_table = table;
  g_path = strdup(path);
  __atomic_store_n(&g_api, &g_table, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_lock);
  return g_api;
}

const NRLiteRtAPI *nr_litert_api(void) { return __atomic_load_n(&g_api, __ATOMIC_ACQUIRE); }

const char *nr_litert_loaded_path(void) { return nr_litert_api() != NULL ? g_path : NULL; }

static pthread_once_t g_folder_once = PTHREAD_ONCE_INIT;
static char *g_folder = NULL;

static void find_folder(void) {
  const NRLiteRtAPI *api = nr_litert_api();
  if (api == NULL) return;
  Dl_info info;
  void *symbol;
  memcpy(&symbol, &api->CreateEnvironment, sizeof(symbol));
  if (dladdr(symbol, &info) == 0 || info.dli_fname == NULL) return;
  char *resolved = realpath(info.dli_fname, NULL);
  if (resolved == NULL) return;
  char *slash = strrchr(resolved, '/');
  if (slash == NULL) {
    free(resolved);
    return;
  }
  if (slash == resolved) slash[1] = '\0';  // the root folder keeps its slash
  else *slash = '\0';
  g_folder = resolved;
}

const char *nr_litert_loaded_folder(void) {
  if (nr_litert_api() == NULL) return NULL;
  pthread_once(&g_folder_once, find_folder);
  return g_folder;
}

int nr_vulkan_loader_open(char *error, size_t error_size) {
  dlerror();
  void *handle = dlopen("libvulkan.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle == NULL) {
    const char *reason = dlerror();
    set_error(error, error_size, "%s", reason != NULL ? reason : "libvulkan.so.1 could not be opened", NULL);
    return 0;
  }
  return 1;  // kept open: the GPU accelerator opens it again and gets the same handle
}

// MARK: - stdout and stderr capture

/// One capturable file descriptor: its lock (held from begin to end, and by writes that must
/// not land in a capture) and, while captured, a duplicate of what it pointed at.
typedef struct {
  pthread_mutex_t lock;
  int fd;
  int saved;
  const char *name;
} capture_t;

static capture_t g_stderr_capture = {PTHREAD_MUTEX_INITIALIZER, STDERR_FILENO, -1, "netrunner-runtime-log"};
static capture_t g_stdout_capture = {PTHREAD_MUTEX_INITIALIZER, STDOUT_FILENO, -1, "netrunner-runtime-stdout"};

static void flush_stream(int fd) { fflush(fd == STDOUT_FILENO ? stdout : stderr); }

static int capture_begin(capture_t *capture) {
  pthread_mutex_lock(&capture->lock);
  flush_stream(capture->fd);
  int file = memfd_create(capture->name, MFD_CLOEXEC);
  if (file < 0) return -1;
  int saved = dup(capture->fd);
  if (saved < 0) {
    close(file);
    return -1;
  }
  if (dup2(file, capture->fd) < 0) {
    close(saved);
    close(file);
    return -1;
  }
  capture->saved = saved;
  return file;
}

static char *capture_end(capture_t *capture, int token) {
  if (token < 0) {
    pthread_mutex_unlock(&capture->lock);
    return NULL;
  }
  flush_stream(capture->fd);
  if (capture->saved >= 0) {
    dup2(capture->saved, capture->fd);
    close(capture->saved);
    capture->saved = -1;
  }
  struct stat info;
  char *text = NULL;
  if (fstat(token, &info) == 0 && info.st_size > 0) {
    size_t size = (size_t)info.st_size;
    if (size > (1u << 20)) size = 1u << 20;  // keep at most 1 MiB of captured text
    text = malloc(size + 1);
    if (text != NULL) {
      ssize_t got = pread(token, text, size, 0);
      if (got < 0) got = 0;
      text[got] = '\0';
    }
  }
  close(token);
  pthread_mutex_unlock(&capture->lock);
  return text;
}

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR; gives up on other errors.
static void write_all(int fd, const void *bytes, size_t count) {
  const char *next = bytes;
  while (count > 0) {
    ssize_t written = write(fd, next, count);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) break;
    next += written;
    count -= (size_t)written;
  }
}

int nr_stderr_capture_begin(void) { return capture_begin(&g_stderr_capture); }

char *nr_stderr_capture_end(int token) { return capture_end(&g_stderr_capture, token); }

void nr_stderr_write(const void *bytes, size_t count) {
  pthread_mutex_lock(&g_stderr_capture.lock);
  write_all(STDERR_FILENO, bytes, count);
  pthread_mutex_unlock(&g_stderr_capture.lock);
}

int nr_stdout_capture_begin(void) { return capture_begin(&g_stdout_capture); }

char *nr_stdout_capture_end(int token) { return capture_end(&g_stdout_capture, token); }

void nr_stdout_write(const void *bytes, size_t count) { write_all(STDOUT_FILENO, bytes, count); }

int nr_anonymous_file(const char *name) { return memfd_create(name, MFD_CLOEXEC); }
