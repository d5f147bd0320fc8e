// CImageCodecs: thin C shims over libjpeg-turbo and libpng for NetRunnerImage.
#ifndef NETRUNNER_CIMAGECODECS_H
#define NETRUNNER_CIMAGECODECS_H

#ifdef __cplusplus
extern "C" {
#endif

/// The libpng version the process runs with, as a number (10639 for 1.6.39).
unsigned int nr_png_library_version(void);

/// The libjpeg API version the shims were compiled against (62 for libjpeg-turbo's 6b API).
int nr_jpeg_library_version(void);

#ifdef __cplusplus
}
#endif

#endif  // NETRUNNER_CIMAGECODECS_H
