#include "CImageCodecs.h"

#include <stdio.h>

#include <jpeglib.h>
#include <png.h>

unsigned int nr_png_library_version(void) { return (unsigned int)png_access_version_number(); }

int nr_jpeg_library_version(void) { return JPEG_LIB_VERSION; }
