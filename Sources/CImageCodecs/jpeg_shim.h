// The JPEG shim's error manager (see jpeg_shim.c): libjpeg's fatal errors and the warnings
// that must fail a decode, turned into a longjmp and a status with its message. Private to
// CImageCodecs: jpeg_shim.c and jpeg_encode.c.
#ifndef NETRUNNER_JPEG_SHIM_H
#define NETRUNNER_JPEG_SHIM_H

#include "CImageCodecs.h"

#include <setjmp.h>
#include <stdio.h>

#include <jpeglib.h>

struct nr_jpeg_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int status;
    char message[NR_CODEC_MESSAGE_SIZE];
};

/// Makes `error` libjpeg's error manager: errors and the warnings that fail a decode longjmp to
/// `error->jump` with `error->status` and `error->message` set; nothing is printed.
void nr_jpeg_install_errors(struct nr_jpeg_error *error);

#endif
